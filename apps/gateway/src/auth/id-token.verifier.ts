import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import {
  createLocalJWKSet,
  errors,
  jwtVerify,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTPayload,
} from 'jose';
import { LOGGER } from '#libs/bootstrap';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

/** Only asymmetric signatures: `none` and HS* (e.g. HS256 keyed with the public key) are refused. */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'ES256'];
/** Clock skew allowed on exp, nbf and iat (the issue allows at most 60 s). */
export const ID_TOKEN_CLOCK_TOLERANCE_S = 60;
/** JWKS lifetime when the response carries no usable Cache-Control (jose's default). */
const DEFAULT_JWKS_MAX_AGE_MS = 10 * 60_000;
const MAX_JWKS_MAX_AGE_MS = 24 * 3600_000;
const JWKS_FETCH_TIMEOUT_MS = 5000;

const VERIFIED_TOKEN_TTL_MS = 60_000;
const VERIFIED_TOKEN_CACHE_ENTRIES = 10_000;

export type IdTokenFailure = 'not_configured' | 'expired' | 'invalid' | 'keys_unavailable';
export type IdTokenResult = { ok: true; claims: JWTPayload & { sub: string } } | { ok: false; reason: IdTokenFailure };

const verifications = counter('weave_id_token_verifications_total', 'ID tokens verified by the gateway', ['outcome']);

type ResolvedKey = Awaited<ReturnType<ReturnType<typeof createLocalJWKSet>>>;

class KeysUnavailableError extends Error {}

/** `max-age` of a Cache-Control header in ms; 0 for no-store/no-cache; undefined when absent. */
export function cacheControlMaxAgeMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const directives = header.toLowerCase().split(',').map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  if (!maxAge) return undefined;
  const seconds = Number(maxAge.slice('max-age='.length));
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * The identity provider's keys, from an http(s) JWKS URL or a local JWKS file.
 *
 * Remote: fetched on first use and kept for the response's Cache-Control max-age (at least the
 * refetch cooldown, at most 24 h; 10 min without one). A token whose `kid` is unknown triggers
 * one refetch, at most once per cooldown (OIDC_JWKS_COOLDOWN_MS), so a provider's key rotation
 * is picked up at once while garbage kids cannot make the gateway hammer the provider.
 * When a refresh fails the previous keys stay in use. Before the first successful load the
 * cooldown holds too: a provider that is down sees one fetch per cooldown, and the tokens in
 * between are answered "keys unavailable" at once (not one fetch per request). Concurrent
 * refreshes share one fetch. A file is read on first use and re-read on an unknown kid under
 * the same cooldown.
 */
class JwksSource {
  /** Bumped whenever a key set is loaded: verifications made with an older set are not reused. */
  generation = 0;
  private resolver?: ReturnType<typeof createLocalJWKSet>;
  private fetchedAt = 0;
  private expiresAt = 0;
  private inflight?: Promise<void>;

  constructor(
    private readonly location: string,
    private readonly cooldownMs: number,
    private readonly logger: Logger,
  ) {}

  private get remote(): boolean {
    return /^https?:\/\//i.test(this.location);
  }

  async resolve(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ResolvedKey> {
    if (!this.resolver) {
      // Never loaded: try at most once per cooldown (the failed attempt set fetchedAt).
      if (this.fetchedAt > 0 && Date.now() - this.fetchedAt < this.cooldownMs && !this.inflight) throw new KeysUnavailableError('identity-provider keys unavailable');
      await this.refresh();
    } else if (this.remote && Date.now() >= this.expiresAt) {
      await this.refresh();
    }
    try {
      return (await this.resolver!(header, token));
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || Date.now() - this.fetchedAt < this.cooldownMs) throw error;
      await this.refresh();
      return (await this.resolver!(header, token));
    }
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async load(): Promise<void> {
    let jwks: JSONWebKeySet;
    let maxAgeMs = DEFAULT_JWKS_MAX_AGE_MS;
    try {
      if (this.remote) {
        const response = await fetch(this.location, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS) });
        if (!response.ok) throw new Error(`JWKS answered HTTP ${response.status}`);
        jwks = (await response.json()) as JSONWebKeySet;
        maxAgeMs = cacheControlMaxAgeMs(response.headers.get('cache-control')) ?? DEFAULT_JWKS_MAX_AGE_MS;
      } else {
        jwks = JSON.parse(await readFile(this.location, 'utf8')) as JSONWebKeySet;
      }
      const resolver = createLocalJWKSet(jwks);
      this.resolver = resolver;
      this.generation += 1;
    } catch (error) {
      // Never the URL itself in logs: it may carry credentials.
      this.logger.warn({ err: (error as Error).message }, 'identity-provider keys could not be loaded');
      this.fetchedAt = Date.now();
      if (!this.resolver) throw new KeysUnavailableError('identity-provider keys unavailable');
      this.expiresAt = Date.now() + this.cooldownMs;
      return;
    }
    this.fetchedAt = Date.now();
    this.expiresAt = this.fetchedAt + Math.min(MAX_JWKS_MAX_AGE_MS, Math.max(this.cooldownMs, maxAgeMs));
  }
}

/**
 * Verifies identity-provider ID tokens (OIDC): signature by a key of the provider's JWKS
 * (RS256/ES256 only), `iss` = OIDC_ISSUER, `aud` contains OIDC_AUDIENCE, `exp`/`nbf`/`iat`
 * within 60 s of clock skew, and a non-empty `sub`. Without OIDC_ISSUER, OIDC_AUDIENCE and
 * OIDC_JWKS_URL every token is refused. Tokens are never logged.
 */
@Injectable()
export class IdTokenVerifier {
  private readonly jwks?: JwksSource;

  constructor(
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    const { OIDC_ISSUER, OIDC_AUDIENCE, OIDC_JWKS_URL } = env;
    if (OIDC_ISSUER && OIDC_AUDIENCE && OIDC_JWKS_URL) {
      this.jwks = new JwksSource(OIDC_JWKS_URL, env.OIDC_JWKS_COOLDOWN_MS, logger.child({ component: 'jwks' }));
    } else if (OIDC_ISSUER || OIDC_AUDIENCE || OIDC_JWKS_URL) {
      logger.warn('OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL must all be set: every ID token is refused');
    }
  }

  private readonly verified = new Map<string, { result: IdTokenResult; until: number; keys: number }>();

  get configured(): boolean {
    return this.jwks !== undefined;
  }

  /**
   * Verified tokens are remembered (by their SHA-256) until they expire, at most
   * VERIFIED_TOKEN_TTL_MS: a client sends the same token with every request, and checking an
   * ES256/RS256 signature each time was a third of the gateway's CPU per payout request.
   * Only successes are cached, and only for the key set that verified them: when the JWKS is
   * reloaded (rotation, expiry), every token is checked again. A refused token always is.
   */
  async verify(token: string): Promise<IdTokenResult> {
    const id = createHash('sha256').update(token).digest('base64');
    const cached = this.verified.get(id);
    if (cached && cached.until > Date.now() && cached.keys === this.jwks?.generation) {
      verifications.inc({ outcome: 'cached' });
      return cached.result;
    }
    if (cached) this.verified.delete(id);
    const keys = this.jwks?.generation ?? 0;
    const result = await this.check(token);
    verifications.inc({ outcome: result.ok ? 'ok' : result.reason });
    if (result.ok && typeof result.claims.exp === 'number' && keys === this.jwks?.generation) {
      if (this.verified.size >= VERIFIED_TOKEN_CACHE_ENTRIES) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(id, { result, until: Math.min(result.claims.exp * 1000, Date.now() + VERIFIED_TOKEN_TTL_MS), keys });
    }
    return result;
  }

  private async check(token: string): Promise<IdTokenResult> {
    const jwks = this.jwks;
    if (!jwks) return { ok: false, reason: 'not_configured' };
    try {
      const { payload } = await jwtVerify(token, (header, input) => jwks.resolve(header, input), {
        issuer: this.env.OIDC_ISSUER,
        audience: this.env.OIDC_AUDIENCE,
        algorithms: ID_TOKEN_ALGORITHMS,
        clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) return { ok: false, reason: 'invalid' };
      // jose checks iat against the clock only with maxTokenAge: a token issued in the future is refused here.
      if (typeof payload.iat !== 'number' || payload.iat > Date.now() / 1000 + ID_TOKEN_CLOCK_TOLERANCE_S) return { ok: false, reason: 'invalid' };
      return { ok: true, claims: payload as JWTPayload & { sub: string } };
    } catch (error) {
      if (error instanceof KeysUnavailableError) return { ok: false, reason: 'keys_unavailable' };
      if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' };
      this.logger.debug({ code: (error as { code?: string }).code }, 'ID token refused');
      return { ok: false, reason: 'invalid' };
    }
  }
}
