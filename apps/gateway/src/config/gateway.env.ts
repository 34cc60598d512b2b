import { createHash } from 'node:crypto';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateBy, ValidateIf } from 'class-validator';
import { IsCidrList, ServiceEnv } from '#libs/config';

/**
 * SHA-256 of tracking secrets that were published (the development default this repository
 * shipped until issue 12): refused as TRACKING_SIGNING_SECRET or _PREVIOUS, since anyone can
 * sign links with them. Hashes, so the code holds no usable secret.
 */
const PUBLISHED_TRACKING_SECRET_SHA256 = new Set(['59afaeefdfe9423d57814efd4a16b4eed803ad250bcfce5d611deaafc3e3a0ab']);

function NotPublished(): PropertyDecorator {
  return ValidateBy({
    name: 'notPublished',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !PUBLISHED_TRACKING_SECRET_SHA256.has(createHash('sha256').update(value).digest('hex')),
      defaultMessage: (args) => `${args?.property} is a value published in this repository; choose a random one (openssl rand -base64 48)`,
    },
  });
}

/** Fewest bytes (UTF-8) a tracking secret may have: HMAC-SHA256 keys shorter than its 32-byte output weaken it. */
export const MIN_TRACKING_SECRET_BYTES = 32;

/** At least MIN_TRACKING_SECRET_BYTES bytes of UTF-8 (counted in bytes, not characters); the message never echoes the value. */
function AtLeastSecretBytes(): PropertyDecorator {
  return ValidateBy({
    name: 'atLeastSecretBytes',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && Buffer.byteLength(value, 'utf8') >= MIN_TRACKING_SECRET_BYTES,
      defaultMessage: (args) => `${args?.property} must be at least ${MIN_TRACKING_SECRET_BYTES} bytes; choose a random one (openssl rand -base64 48)`,
    },
  });
}

/** TRACKING_SIGNING_SECRET is validated when it is set, and must be set when TRACKING_SIGNING_SECRET_REQUIRED is. */
const trackingSecretChecked = (env: GatewayEnv) => env.TRACKING_SIGNING_SECRET !== undefined || env.TRACKING_SIGNING_SECRET_REQUIRED;

/** Configuration of the gateway, validated once at start (DESIGN §2). */
export class GatewayEnv extends ServiceEnv {
  @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  /** How long GET /agent/reporting waits for reporting-projection before answering 503. */
  @IsInt() @Min(50) @Max(60000)
  REPORTING_REQUEST_TIMEOUT_MS = 2000;

  /**
   * Longest an unused identity lookup (API key, platform status, owner; positive or negative)
   * stays in a replica's cache: only the bound on the memory it takes. Freshness comes from the
   * `identity.v1.changed` broadcast and from the identity version poll (IDENTITY_VERSION_POLL_MS),
   * which refuse a revoked key or a suspended platform everywhere within a second whatever this
   * is. 0 disables the cache (and the poll).
   */
  @IsInt() @Min(0) @Max(600000)
  IDENTITY_CACHE_TTL_MS = 60000;

  /**
   * How often each replica reads the identity version (one query per replica) and drops its
   * identity cache when it moved, or could not be read: the bound on staleness when an
   * `identity.v1.changed` broadcast is missed (this interval plus a query; at most 500 ms so that
   * it stays within DESIGN §7's second).
   */
  @IsInt() @Min(50) @Max(500)
  IDENTITY_VERSION_POLL_MS = 250;

  /** Most API-key lookups cached per replica (oldest dropped first). */
  @IsInt() @Min(0) @Max(1000000)
  IDENTITY_CACHE_MAX_ENTRIES = 10000;

  /**
   * How often each replica writes the API-key uses it saw (`last_used_at`, one UPDATE per batch)
   * instead of a write per request; also at shutdown. At most 50 s, so that `last_used_at` stays
   * within a minute of a key's latest use (DESIGN §7).
   */
  @IsInt() @Min(50) @Max(50_000)
  KEY_USAGE_FLUSH_INTERVAL_MS = 30_000;

  /** Largest request body accepted, in bytes (413 above it). */
  @IsInt() @Min(1024) @Max(10 * 1024 * 1024)
  HTTP_BODY_LIMIT = 64 * 1024;

  /**
   * Requests per minute one API key may make (shared by every gateway replica through Redis;
   * a token bucket: this many at once, refilled evenly over the minute). 0: no limit. The
   * default is a safety cap above what one replica can serve; set it to what platforms are sold.
   */
  @IsInt() @Min(0) @Max(100_000_000)
  RATE_LIMIT_PER_KEY_PER_MINUTE = 600_000;

  /** Requests per minute one ID-token subject (a signed-in owner) may make; 0: no limit. */
  @IsInt() @Min(0) @Max(100_000_000)
  RATE_LIMIT_PER_TOKEN_PER_MINUTE = 60_000;

  /**
   * Failed authentications (401) per minute from one client address (IPv6: per
   * RATE_LIMIT_IPV6_PREFIX); beyond them the address's failures are answered 429, while a
   * valid credential from it is still served. 0: no limit.
   */
  @IsInt() @Min(0) @Max(100_000_000)
  AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE = 120;

  /**
   * How much of an IPv6 client address the per-address limits (failed authentications, tracking)
   * count as one client: its first this many bits, 32 (a provider's allocation) to 128 (single
   * addresses); a subscriber usually holds a whole /64, or a /56 or /48. IPv4 addresses
   * (IPv4-mapped IPv6 included) are counted one by one.
   */
  @IsInt() @Min(32) @Max(128)
  RATE_LIMIT_IPV6_PREFIX = 64;

  /** How long a rate-limit check waits for Redis before letting the request through (fail open). */
  @IsInt() @Min(5) @Max(5000)
  RATE_LIMIT_REDIS_TIMEOUT_MS = 200;

  /** Expected `iss` of identity-provider ID tokens (ID-token endpoints answer 401 without it). */
  @IsOptional() @IsString()
  OIDC_ISSUER?: string;

  /** Expected `aud` of ID tokens. */
  @IsOptional() @IsString()
  OIDC_AUDIENCE?: string;

  /** JWKS of the identity provider: an http(s) URL or a path to a local JWKS JSON file. */
  @IsOptional() @IsString()
  OIDC_JWKS_URL?: string;

  /**
   * The dashboard's OAuth client at the identity provider (DESIGN §7): with OIDC_ISSUER, what
   * GET /dashboard/config.json tells the app to sign in as. Unset: the dashboard says that
   * sign-in is not configured.
   */
  @IsOptional() @IsString() @MinLength(1)
  OIDC_CLIENT_ID?: string;

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

  /**
   * Longest a large payout reply is served from the gateway's cache should a
   * `payouts.v1.changed` announcement be missed (the same meaning as in payouts-read; 0: no cache).
   */
  @IsInt() @Min(0) @Max(60000)
  PAYOUTS_CACHE_TTL_MS = 5000;

  /**
   * Payout replies smaller than this are neither cached by the gateway nor compressed. 0 (every
   * reply): a cached reply is the current read model until payouts-read announces a change, so
   * it stays right even while payouts-read is down (docs/decisions/).
   */
  @IsInt() @Min(0) @Max(16 * 1024 * 1024)
  PAYOUTS_CACHE_MIN_BYTES = 0;

  /** Bytes of payout replies (and their compressed forms) the gateway caches, least recently used out first. */
  @IsInt() @Min(0) @Max(4 * 1024 * 1024 * 1024)
  PAYOUTS_CACHE_MAX_BYTES = 64 * 1024 * 1024;

  /**
   * Bytes of series replies the gateway keeps (each at most a second, dropped at every
   * publication), least recently used out first; 0: no cache (docs/decisions/).
   */
  @IsInt() @Min(0) @Max(4 * 1024 * 1024 * 1024)
  SERIES_CACHE_MAX_BYTES = 32 * 1024 * 1024;

  /**
   * HMAC secret of tracking URLs, at least 32 bytes. No default in code: unset, the gateway uses
   * a secret it generated at its first start and keeps in the identity schema (shared by the
   * replicas, a warning at every start); set it in production (tracking-secrets.provider.ts).
   */
  @ValidateIf(trackingSecretChecked)
  @IsString({ message: 'TRACKING_SIGNING_SECRET must be set (TRACKING_SIGNING_SECRET_REQUIRED is true: no generated secret)' })
  @AtLeastSecretBytes()
  @NotPublished()
  TRACKING_SIGNING_SECRET?: string;

  /**
   * Refuse to start without TRACKING_SIGNING_SECRET instead of generating one (the production
   * overlay sets it, so a missing Secret stops the rollout rather than signing with a secret
   * nobody manages).
   */
  @IsBoolean()
  TRACKING_SIGNING_SECRET_REQUIRED = false;

  /**
   * The secret before the last rotation (at least 32 bytes too): tokens it signed are still
   * accepted (never used to sign), so tracking URLs handed out before a rotation keep working. Unset after the grace period.
   */
  @IsOptional() @IsString() @AtLeastSecretBytes() @NotPublished()
  TRACKING_SIGNING_SECRET_PREVIOUS?: string;

  /**
   * Days a tracking link records its exposure or click (DESIGN §5): the token carries its
   * expiry; an older link still redirects but records nothing.
   */
  @IsInt() @Min(1) @Max(3650)
  TRACKING_LINK_TTL_DAYS = 30;

  /**
   * Tracking requests per minute one client address may have recorded (a token bucket, shared by
   * the replicas through Redis); beyond it the link still answers, but records nothing. 0: no limit.
   */
  @IsInt() @Min(0) @Max(100_000_000)
  TRACKING_LIMIT_PER_IP_PER_MINUTE = 600;

  /**
   * Addresses and CIDR ranges of the proxies in front of the gateway (the ingress controller),
   * comma separated: X-Forwarded-For is believed only from them. Unset: from nobody, the client
   * address is the TCP peer.
   */
  @IsOptional() @IsCidrList()
  TRUSTED_PROXIES?: string;

  /**
   * The built dashboard (`npm run build`: index.html and assets/), served at /dashboard/;
   * relative to the working directory. Missing: the gateway starts anyway and /dashboard/
   * answers a 404 problem saying so.
   */
  @IsString() @MinLength(1)
  DASHBOARD_DIR = 'dist/dashboard';

  /**
   * More origins the dashboard may call besides its own and OIDC_ISSUER's (its CSP
   * `connect-src`), comma separated: an identity provider whose token or revocation endpoint
   * lives on another origin than its issuer.
   */
  @IsOptional()
  @Matches(/^\s*https?:\/\/[^\s/,]+\s*(,\s*https?:\/\/[^\s/,]+\s*)*$/, { message: 'DASHBOARD_CONNECT_SRC must be http(s) origins (scheme://host[:port]), comma separated' })
  DASHBOARD_CONNECT_SRC?: string;

  /**
   * Public address of the gateway, the base of `exposure_url` and `click_url` (e.g.
   * `https://api.weave.example`, a path prefix allowed). Unset: `http://127.0.0.1:<port the
   * gateway listens on>`, which only works on the developer machine.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?$/, { message: 'PUBLIC_BASE_URL must be an http(s) URL without credentials, query or fragment' })
  PUBLIC_BASE_URL?: string;
}
