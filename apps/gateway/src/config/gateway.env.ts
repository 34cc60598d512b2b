import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { ServerEnv } from '#libs/config';

/** Development default of TRACKING_SIGNING_SECRET; main.ts warns when it is still in use. */
export const DEV_TRACKING_SIGNING_SECRET = 'dev-only-tracking-signing-secret-do-not-use-in-production';

/** Configuration of the gateway, validated once at start (DESIGN §2). */
export class GatewayEnv extends ServerEnv {
  @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  /** How long GET /agent/reporting waits for reporting-projection before answering 503. */
  @IsInt() @Min(50) @Max(60000)
  REPORTING_REQUEST_TIMEOUT_MS = 2000;

  @IsInt() @Min(1) @Max(100)
  DATABASE_POOL_SIZE = 10;

  /**
   * Lifetime of cached API-key lookups (positive and negative) in each replica. At most 500 ms,
   * so that a revoked key or a suspended platform is refused everywhere within a second even
   * when a replica misses the `identity.v1.changed` broadcast. 0 disables the cache.
   */
  @IsInt() @Min(0) @Max(500)
  IDENTITY_CACHE_TTL_MS = 500;

  /** Most API-key lookups cached per replica (oldest dropped first). */
  @IsInt() @Min(0) @Max(1000000)
  IDENTITY_CACHE_MAX_ENTRIES = 10000;

  /** Largest request body accepted, in bytes (413 above it). */
  @IsInt() @Min(1024) @Max(10 * 1024 * 1024)
  HTTP_BODY_LIMIT = 64 * 1024;

  /** Expected `iss` of identity-provider ID tokens (ID-token endpoints answer 401 without it). */
  @IsOptional() @IsString()
  OIDC_ISSUER?: string;

  /** Expected `aud` of ID tokens. */
  @IsOptional() @IsString()
  OIDC_AUDIENCE?: string;

  /** JWKS of the identity provider: an http(s) URL or a path to a local JWKS JSON file. */
  @IsOptional() @IsString()
  OIDC_JWKS_URL?: string;

  /** Claim holding the account role; payouts need the value `agent`. */
  @IsString() @MinLength(1)
  OIDC_ROLE_CLAIM = 'role';

  /**
   * Least time between two JWKS fetches caused by tokens with an unknown `kid` (and the
   * shortest time a fetched JWKS is kept): a key rotation is picked up at once, garbage kids
   * cannot make the gateway hammer the identity provider.
   */
  @IsInt() @Min(0) @Max(3600000)
  OIDC_JWKS_COOLDOWN_MS = 30000;

  /** How long PATCH /agent/update-onboarding waits for timezone-settings before answering 503. */
  @IsInt() @Min(50) @Max(60000)
  TIMEZONE_REQUEST_TIMEOUT_MS = 2000;

  /** How long the /agent-payouts/me endpoints wait for payouts-read before answering 503. */
  @IsInt() @Min(50) @Max(60000)
  PAYOUTS_REQUEST_TIMEOUT_MS = 2000;

  /** HMAC secret of tracking URLs. */
  @IsString() @MinLength(16)
  TRACKING_SIGNING_SECRET = DEV_TRACKING_SIGNING_SECRET;
}
