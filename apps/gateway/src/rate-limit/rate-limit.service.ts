import { createHash } from 'node:crypto';
import { HttpException, HttpStatus, Inject, Injectable, type ExecutionContext, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { LOGGER, createRedis } from '#libs/bootstrap';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { ProblemException } from '../http/problem.js';
import { CONSUME_SCRIPT, FAILURE_SCRIPT } from './rate-limit.scripts.js';

/** Which credential authenticated the request: each kind has its own limit. */
export type PrincipalKind = 'api_key' | 'id_token';
type RejectionReason = PrincipalKind | 'auth_failures';

const WINDOW_MS = 60_000;
/** Addresses this replica knows to be blocked, refused without a Redis round trip. */
const MAX_BLOCKED_ADDRESSES = 10_000;
/** After a Redis error or timeout, requests pass without asking Redis for this long. */
const BREAKER_MS = 1000;
const WARNING_INTERVAL_MS = 10_000;
const READY_WAIT_MS = 3000;
/**
 * A replica takes tokens from a principal's shared bucket a lease at a time — a thousandth of
 * the per-minute limit (1 for small limits, so those stay exact) — and serves the next requests
 * of that principal from the lease for at most LEASE_MS, without a Redis round trip. A busy
 * principal then costs about one round trip a second per replica instead of one per request;
 * the price is that replicas may admit up to (replicas × lease) more than the limit in a
 * window, and an address blocked for failures on another replica is refused once the lease of
 * its principal runs out (this replica refuses it at once).
 */
const LEASE_FRACTION = 1000;
const LEASE_MS = 1000;
const MAX_LEASES = 100_000;

const rejections = counter('weave_rate_limit_rejections_total', 'Requests answered 429 by the gateway rate limiter', ['reason']);
const failOpens = counter(
  'weave_rate_limit_fail_open_total',
  'Requests let through without a rate-limit check because Redis did not answer (the limiter fails open)',
);

const DETAILS: Record<RejectionReason, string> = {
  api_key: 'Too many requests with this API key; retry after the number of seconds in Retry-After.',
  id_token: 'Too many requests from this account; retry after the number of seconds in Retry-After.',
  auth_failures: 'Too many failed authentication attempts from this address; retry after the number of seconds in Retry-After.',
};

interface LimiterCommands {
  rateLimitConsume(
    principalKey: string,
    failureKey: string,
    limit: number,
    failureLimit: number,
    windowMs: number,
    wanted: number,
  ): Promise<[number, number, number, number, number]>;
  rateLimitFailure(failureKey: string, failureLimit: number, windowMs: number): Promise<[number, number]>;
}

/**
 * The rows of one deployment in a shared Redis: a hash of the identity database's location
 * (never its credentials). Principals (key ids, owner subjects) are defined by that database,
 * so gateways of one deployment share limits and two deployments on one Redis never mix.
 */
export function rateLimitNamespace(databaseUrl: string): string {
  let location = databaseUrl;
  try {
    const url = new URL(databaseUrl);
    location = `${url.hostname}:${url.port}${url.pathname}`;
  } catch {
    // Not parseable as a URL: the whole string, hashed below (never stored or logged).
  }
  return createHash('sha256').update(location).digest('base64url').slice(0, 12);
}

const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));

/**
 * Rate limits of the gateway's authenticated routes, shared by every replica through Redis
 * (docs/security.md "Rate limits"):
 * - per API key (its key id) and per ID-token subject: RATE_LIMIT_PER_KEY_PER_MINUTE and
 *   RATE_LIMIT_PER_TOKEN_PER_MINUTE, answered 429 with Retry-After beyond them;
 * - failed authentications per client address (`request.ip`, see createHttpApp's trustProxy):
 *   after AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE failures the address is answered 429, whatever
 *   credential it sends, until its bucket has room again.
 *
 * Applied by ApiKeyGuard and IdTokenGuard through `guard()`, so every route those guards
 * protect is limited, including routes added later. One Redis round trip per request: the
 * principal's bucket and the address's failure bucket are read in the same script, after the
 * credential was checked (in-process cache); a failure costs one round trip instead. An address
 * this replica has seen blocked is refused before its credential is looked at, without Redis.
 *
 * Redis unavailable (down, slow beyond RATE_LIMIT_REDIS_TIMEOUT_MS): requests pass (fail open,
 * availability over limiting), counted in weave_rate_limit_fail_open_total and logged at most
 * every 10 s; after an error Redis is left alone for a second.
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly redis: Redis & LimiterCommands;
  private readonly prefix: string;
  private readonly blocked = new Map<string, number>();
  /** Tokens this replica holds per principal key: what is left, until when, what Redis said was left besides. */
  private readonly leases = new Map<string, { left: number; until: number; shared: number; resetMs: number }>();
  private readonly enabled: boolean;
  private breakerUntil = 0;
  private lastWarning = 0;
  private failedOpenSinceWarning = 0;

  constructor(
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.prefix = `weave:ratelimit:{${rateLimitNamespace(env.DATABASE_URL)}}`;
    this.enabled = env.RATE_LIMIT_PER_KEY_PER_MINUTE > 0 || env.RATE_LIMIT_PER_TOKEN_PER_MINUTE > 0 || env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE > 0;
    // Its own connection: a command timeout of its own, and a slow limiter never queues behind other traffic.
    const redis = createRedis(env.REDIS_URL, 'gateway-rate-limit', { commandTimeout: env.RATE_LIMIT_REDIS_TIMEOUT_MS, lazyConnect: !this.enabled });
    redis.defineCommand('rateLimitConsume', { numberOfKeys: 2, lua: CONSUME_SCRIPT });
    redis.defineCommand('rateLimitFailure', { numberOfKeys: 1, lua: FAILURE_SCRIPT });
    redis.on('error', (error: Error) => this.warn(error));
    this.redis = redis as Redis & LimiterCommands;
  }

  /** Waits (briefly) for Redis, so the first requests after start are limited too; never fails the start. */
  async onModuleInit(): Promise<void> {
    const ready = () => this.redis.status === 'ready';
    if (!this.enabled || ready()) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.redis.once('ready', () => resolve())),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!ready()) this.logger.warn('rate-limit Redis not reachable at start: requests pass unlimited until it is');
  }

  onApplicationShutdown(): void {
    if (this.redis.status !== 'end') this.redis.disconnect();
  }

  /**
   * Runs a guard's authentication under the limits: refuses a known-blocked address first,
   * counts a 401 as a failure of the address, and counts a success against the principal.
   * `authenticate` resolves to the principal's stable id (key id, or the token's `sub`).
   */
  async guard(context: ExecutionContext, kind: PrincipalKind, authenticate: () => Promise<string>): Promise<true> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const address = request.ip ?? 'unknown';
    this.refuseKnownBlocked(address);
    let principal: string;
    try {
      principal = await authenticate();
    } catch (error) {
      throw await this.afterFailure(error, address);
    }
    await this.consume(kind, principal, address, reply);
    return true;
  }

  private refuseKnownBlocked(address: string): void {
    const until = this.blocked.get(address);
    if (until === undefined) return;
    const left = until - Date.now();
    if (left > 0) throw this.reject('auth_failures', left);
    this.blocked.delete(address);
  }

  private block(address: string, ms: number): void {
    if (this.blocked.size >= MAX_BLOCKED_ADDRESSES && !this.blocked.has(address)) {
      // Oldest entry first out: Map keeps insertion order.
      this.blocked.delete(this.blocked.keys().next().value as string);
    }
    this.blocked.set(address, Date.now() + ms);
  }

  private async consume(kind: PrincipalKind, principal: string, address: string, reply: FastifyReply): Promise<void> {
    const limit = kind === 'api_key' ? this.env.RATE_LIMIT_PER_KEY_PER_MINUTE : this.env.RATE_LIMIT_PER_TOKEN_PER_MINUTE;
    const failureLimit = this.env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE;
    if ((limit === 0 && failureLimit === 0) || this.breakerOpen()) return;
    const key = this.principalKey(kind, principal);
    const lease = this.leases.get(key);
    if (lease && lease.left > 0 && lease.until > Date.now()) {
      lease.left--;
      this.rateLimitHeaders(reply, limit, lease.shared + lease.left, lease.resetMs);
      return;
    }
    const wanted = Math.max(1, Math.floor(limit / LEASE_FRACTION));
    let result: [number, number, number, number, number];
    try {
      result = await this.redis.rateLimitConsume(key, this.failureKey(address), limit, failureLimit, WINDOW_MS, wanted);
    } catch (error) {
      this.failOpen(error as Error);
      return;
    }
    const [code, remaining, retryMs, resetMs, granted] = result;
    if (code === 2) {
      this.block(address, retryMs);
      throw this.reject('auth_failures', retryMs);
    }
    if (limit === 0) return;
    if (granted > 1) this.keepLease(key, { left: granted - 1, until: Date.now() + LEASE_MS, shared: remaining, resetMs });
    else this.leases.delete(key);
    this.rateLimitHeaders(reply, limit, remaining + Math.max(0, granted - 1), resetMs);
    if (code === 1) throw this.reject(kind, retryMs);
  }

  private rateLimitHeaders(reply: FastifyReply, limit: number, remaining: number, resetMs: number): void {
    void reply.header('RateLimit-Limit', String(limit)).header('RateLimit-Remaining', String(Math.max(0, remaining))).header('RateLimit-Reset', seconds(resetMs));
  }

  private keepLease(key: string, lease: { left: number; until: number; shared: number; resetMs: number }): void {
    if (this.leases.size >= MAX_LEASES && !this.leases.has(key)) {
      // Oldest first out (Map keeps insertion order); an evicted lease only costs a round trip.
      this.leases.delete(this.leases.keys().next().value as string);
    }
    this.leases.set(key, lease);
  }

  /** The error the guard answers after `error`: a 401 is counted against the address, and may become a 429. */
  private async afterFailure(error: unknown, address: string): Promise<unknown> {
    const limit = this.env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE;
    if (!(error instanceof HttpException) || error.getStatus() !== HttpStatus.UNAUTHORIZED || limit === 0 || this.breakerOpen()) return error;
    let code: number;
    let blockedMs: number;
    try {
      [code, blockedMs] = await this.redis.rateLimitFailure(this.failureKey(address), limit, WINDOW_MS);
    } catch (redisError) {
      this.failOpen(redisError as Error);
      return error;
    }
    if (blockedMs > 0) this.block(address, blockedMs);
    // Already blocked (another replica counted the failures): answered as if refused up front.
    return code === 1 ? this.reject('auth_failures', blockedMs) : error;
  }

  /** A 429 problem; RateLimit-* headers already set on the reply are kept by the problem filter. */
  private reject(reason: RejectionReason, retryMs: number): HttpException {
    rejections.inc({ reason });
    return new ProblemException('rate-limited', DETAILS[reason], { 'Retry-After': seconds(retryMs) });
  }

  private principalKey(kind: PrincipalKind, principal: string): string {
    // Key ids are short and not secret; subjects are hashed (any length, any characters).
    return kind === 'api_key' ? `${this.prefix}:key:${principal}` : `${this.prefix}:sub:${createHash('sha256').update(principal).digest('base64url')}`;
  }

  private failureKey(address: string): string {
    // An IP address as is; anything else (a forwarded header's odd value) hashed, so a key stays short.
    const plain = address.length <= 45 && /^[0-9A-Fa-f:.]+$/.test(address);
    return `${this.prefix}:fail:${plain ? address : createHash('sha256').update(address).digest('base64url')}`;
  }

  /** Whether Redis failed within the last second: the request then passes unchecked (counted). */
  private breakerOpen(): boolean {
    if (Date.now() >= this.breakerUntil) return false;
    failOpens.inc();
    this.failedOpenSinceWarning++;
    return true;
  }

  private failOpen(error: Error): void {
    failOpens.inc();
    this.failedOpenSinceWarning++;
    this.breakerUntil = Date.now() + BREAKER_MS;
    this.warn(error);
  }

  private warn(error: Error): void {
    if (Date.now() - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = Date.now();
    this.logger.warn({ err: error.message, failedOpen: this.failedOpenSinceWarning }, 'rate limiter: Redis unavailable, requests pass unlimited');
    this.failedOpenSinceWarning = 0;
  }
}
