import { rolesOf } from '#libs/oidc-claims';

/** One role-claim reader for the gateway's IdTokenGuard and the dashboard (OIDC_ROLE_CLAIM). */
describe('rolesOf', () => {
  it('reads a plain claim holding a string or a list of strings (other entries dropped)', () => {
    expect(rolesOf({ role: 'agent' }, 'role')).toEqual(['agent']);
    expect(rolesOf({ roles: ['viewer', 'agent', 3] }, 'roles')).toEqual(['viewer', 'agent']);
  });

  it('reads a namespaced URL claim as a name, not as a dotted path', () => {
    expect(rolesOf({ 'https://weave.example/roles': ['admin', 'agent'] }, 'https://weave.example/roles')).toEqual(['admin', 'agent']);
  });

  it('follows a dotted path into nested claims when no claim has that name', () => {
    expect(rolesOf({ realm_access: { roles: ['agent'] } }, 'realm_access.roles')).toEqual(['agent']);
    expect(rolesOf({ 'realm_access.roles': 'owner', realm_access: { roles: ['agent'] } }, 'realm_access.roles')).toEqual(['owner']);
    expect(rolesOf({ realm_access: 'agent' }, 'realm_access.roles')).toEqual([]);
  });

  it('finds no role in a missing claim or one of another type', () => {
    expect(rolesOf({}, 'role')).toEqual([]);
    expect(rolesOf({ role: { agent: true } }, 'role')).toEqual([]);
    expect(rolesOf({ role: null }, 'role')).toEqual([]);
  });
});
