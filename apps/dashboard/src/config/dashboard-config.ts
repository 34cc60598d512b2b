/**
 * GET /dashboard/config.json, served by the gateway (apps/dashboard/README.md). The app reads
 * it before anything else: no settings are baked into the build, so one build serves every
 * environment.
 */
export interface DashboardConfig {
  /** OIDC_ISSUER: the identity provider (its discovery document is `<issuer>/.well-known/openid-configuration`); null: sign-in not configured. */
  issuer: string | null;
  /** OIDC_CLIENT_ID: the dashboard's OAuth client at that provider; null: sign-in not configured. */
  client_id: string | null;
  /** OIDC_ROLE_CLAIM: the ID-token claim that holds the role (payouts need `agent`). */
  role_claim: string;
  /** Where the API is: "" for the dashboard's own origin (the gateway that serves it), or an absolute http(s) URL. */
  api_base_url: string;
}

export class ConfigError extends Error {}

function optionalString(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') throw new ConfigError(`config.json: ${name} must be a string or null`);
  return value;
}

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`config.json: ${name} must be an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError(`config.json: ${name} must be an http(s) URL`);
  return value.replace(/\/+$/, '');
}

/** Validates the parsed config.json; throws ConfigError with the reason. */
export function parseDashboardConfig(body: unknown): DashboardConfig {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ConfigError('config.json must be a JSON object');
  const record = body as Record<string, unknown>;
  const issuer = optionalString(record, 'issuer');
  const clientId = optionalString(record, 'client_id');
  if ((issuer === null) !== (clientId === null)) throw new ConfigError('config.json: issuer and client_id are set together or not at all');
  const roleClaim = optionalString(record, 'role_claim') ?? 'role';
  const apiBase = optionalString(record, 'api_base_url');
  return {
    issuer: issuer === null ? null : httpUrl(issuer, 'issuer'),
    client_id: clientId,
    role_claim: roleClaim,
    api_base_url: apiBase === null ? '' : httpUrl(apiBase, 'api_base_url'),
  };
}
