import { Inject, Injectable, type ExecutionContext, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { AuthFailures, type LookupGate } from './auth-failures.js';
import { LeaseBook } from './lease-book.js';
import { rateLimitHeaders, sendRateLimitHeaders } from './rate-limit-headers.js';
import { RateLimitStore, type PrincipalKind } from './rate-limit.store.js';
import { rateLimited } from './rate-limited.exception.js';

const READY_WAIT_MS = 3000;
/**
 * A lease is a thousandth of the per-minute limit (1 for limits under 2,000, which so stay
 * exact), used for at most a second (LeaseBook): a busy principal costs about one Redis round
 * trip per lease per replica instead of one per request.
 */
const LEASE_FRACTION = 1000;
const LEASE_MS = 1000;
const MAX_LEASES = 100_000;

/**
 * Rate limits of the gateway's authenticated routes, shared by every replica through Redis
 * (docs/security.md "Rate limits"):
 * - per API key (its key id) and per ID-token subject: RATE_LIMIT_PER_KEY_PER_MINUTE and
 *   RATE_LIMIT_PER_TOKEN_PER_MINUTE, answered 429 with Retry-After beyond them (LeaseBook over
 *   RateLimitStore; RateLimit-* headers on the answers, rate-limit-headers.ts);
 * - failed authentications per client address (AuthFailures): only requests whose credential
 *   failed are counted and, once the address is over AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE,
 *   refused; a valid credential is served whatever its address did.
 *
 * Applied by ApiKeyGuard and IdTokenGuard through `guard()`, so every route those guards
 * protect is limited, including routes added later. Redis unavailable (down, slow beyond
 * RATE_LIMIT_REDIS_TIMEOUT_MS): requests pass (fail open, availability over limiting).
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly store: RateLimitStore;
  private readonly leases: LeaseBook;
  private readonly failures: AuthFailures;
  private readonly enabled: boolean;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.enabled = env.RATE_LIMIT_PER_KEY_PER_MINUTE > 0 || env.RATE_LIMIT_PER_TOKEN_PER_MINUTE > 0 || env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE > 0;
    this.store = new RateLimitStore(env, logger, !this.enabled);
    this.leases = new LeaseBook(this.store, { fraction: LEASE_FRACTION, leaseMs: LEASE_MS, maxLeases: MAX_LEASES });
    this.failures = new AuthFailures(this.store, env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE, env.RATE_LIMIT_IPV6_PREFIX);
  }

  /** Waits (briefly) for Redis, so the first requests after start are limited too; never fails the start. */
  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    this.sweeper = setInterval(() => this.leases.sweep(), LEASE_MS).unref();
    if (!(await this.store.ready(READY_WAIT_MS))) this.logger.warn('rate-limit Redis not reachable at start: requests pass unlimited until it is');
  }

  /** Gives back what the leases did not use, then closes the connection. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    this.leases.close();
    await this.store.close();
  }

  /**
   * Runs a guard's authentication under the limits. `authenticate` resolves to the principal's
   * stable id (key id, or the token's `sub`); it is given a gate for its database lookups when
   * the client address is blocked for failures (AuthFailures). A failure (401) is counted
   * against the address, and is answered 429 while the address is blocked; a success is counted
   * against the principal.
   */
  async guard(context: ExecutionContext, kind: PrincipalKind, authenticate: (gate: LookupGate | undefined) => Promise<string>): Promise<true> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const address = request.ip ?? 'unknown';
    let principal: string;
    try {
      principal = await authenticate(this.failures.gate(address));
    } catch (error) {
      throw await this.failures.afterFailure(error, address);
    }
    const limit = kind === 'api_key' ? this.env.RATE_LIMIT_PER_KEY_PER_MINUTE : this.env.RATE_LIMIT_PER_TOKEN_PER_MINUTE;
    if (limit === 0) return true;
    const admission = await this.leases.admit(this.store.principalKey(kind, principal), limit);
    if (!admission) return true; // Redis did not answer: fail open
    if (!admission.allowed) throw rateLimited(kind, admission.retryMs, rateLimitHeaders({ limit, remaining: 0, resetMs: admission.resetMs }));
    sendRateLimitHeaders(context, { limit, remaining: admission.remaining, resetMs: admission.resetMs });
    return true;
  }
}
