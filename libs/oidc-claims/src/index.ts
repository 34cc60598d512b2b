/**
 * The roles an ID token carries in `claim` (OIDC_ROLE_CLAIM): the claim itself when present (so
 * Auth0's namespaced URL claims work), else a dotted path into nested claims (Keycloak's
 * `realm_access.roles`). A string or an array of strings; anything else carries no role.
 * One rule for the gateway's IdTokenGuard and the dashboard (which hides what the API would
 * refuse), so this lib imports nothing: Vite bundles it for the browser as it is.
 */
export function rolesOf(claims: Readonly<Record<string, unknown>>, claim: string): string[] {
  let value: unknown = claims[claim];
  if (value === undefined && claim.includes('.')) {
    value = claim.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), claims);
  }
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}
