import 'reflect-metadata';
import { loadEnv } from '#libs/config';
import { DevIdentityProviderEnv, parseDevAccounts } from '../../apps/dev-identity-provider/src/config/dev-identity-provider.env.js';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { configProblems } from '../support/service-envs.js';

/** The settings `npm start` reads for its development identity provider, and the gateway's dashboard settings. */

describe('DevIdentityProviderEnv', () => {
  it('has its documented defaults: port 3900, a generated password, no other account', () => {
    const env = loadEnv(DevIdentityProviderEnv, {});
    expect(env).toMatchObject({ DEV_IDP_PORT: 3900, DEV_IDP_DASHBOARD_ORIGIN: 'http://127.0.0.1:3000' });
    expect(env.DEV_IDP_PASSWORD).toBeUndefined();
    expect(env.DEV_IDP_ACCOUNTS).toBeUndefined();
  });

  it('reads more accounts from DEV_IDP_ACCOUNTS, a JSON array', () => {
    const accounts = '[{"username":"viewer","sub":"viewer-owner"},{"username":"ops","sub":"ops-owner","password":"a-password","role":"agent","name":"Ops"}]';
    expect(loadEnv(DevIdentityProviderEnv, { DEV_IDP_ACCOUNTS: accounts }).DEV_IDP_ACCOUNTS).toBe(accounts);
    expect(parseDevAccounts(accounts)).toEqual([
      { username: 'viewer', sub: 'viewer-owner' },
      { username: 'ops', sub: 'ops-owner', password: 'a-password', role: 'agent', name: 'Ops' },
    ]);
    expect(parseDevAccounts('[{"username":"v","sub":"s","role":null}]')).toEqual([{ username: 'v', sub: 's', role: null }]);
  });

  it.each([
    ['not JSON', '[{', 'DEV_IDP_ACCOUNTS is not JSON'],
    ['not an array', '{"username":"v","sub":"s"}', 'DEV_IDP_ACCOUNTS must be a JSON array of accounts'],
    ['an entry without sub', '[{"username":"v"}]', 'DEV_IDP_ACCOUNTS entry 0 needs a non-empty string sub'],
    ['an unknown field', '[{"username":"v","sub":"s","admin":true}]', 'DEV_IDP_ACCOUNTS entry 0 has unknown field(s) admin'],
    ['a role that is not a string', '[{"username":"v","sub":"s","role":1}]', 'DEV_IDP_ACCOUNTS entry 0: role must be a string or null'],
  ])('refuses %s with one clear line', (_what, value, message) => {
    expect(configProblems(DevIdentityProviderEnv, { DEV_IDP_ACCOUNTS: value })).toEqual([`DEV_IDP_ACCOUNTS: ${message}`]);
  });

  it('refuses a short password and a port out of range', () => {
    expect(configProblems(DevIdentityProviderEnv, { DEV_IDP_PASSWORD: 'short' }).join('\n')).toMatch(/^DEV_IDP_PASSWORD: /m);
    expect(configProblems(DevIdentityProviderEnv, { DEV_IDP_PORT: '70000' }).join('\n')).toMatch(/^DEV_IDP_PORT: /m);
  });
});

describe('GatewayEnv: the dashboard settings', () => {
  it('defaults: the build in dist/dashboard, no client id, no extra origins', () => {
    const env = loadEnv(GatewayEnv, {});
    expect(env.DASHBOARD_DIR).toBe('dist/dashboard');
    expect(env.OIDC_CLIENT_ID).toBeUndefined();
    expect(env.DASHBOARD_CONNECT_SRC).toBeUndefined();
  });

  it('takes DASHBOARD_CONNECT_SRC as http(s) origins only', () => {
    expect(configProblems(GatewayEnv, { DASHBOARD_CONNECT_SRC: 'https://a.example, http://127.0.0.1:8080' })).toEqual([]);
    for (const bad of ['https://a.example/path', 'ftp://a.example', 'a.example', "https://a.example 'unsafe-inline'"]) {
      expect({ bad, problems: configProblems(GatewayEnv, { DASHBOARD_CONNECT_SRC: bad }) }).toEqual({
        bad,
        problems: ['DASHBOARD_CONNECT_SRC: DASHBOARD_CONNECT_SRC must be http(s) origins (scheme://host[:port]), comma separated'],
      });
    }
  });
});
