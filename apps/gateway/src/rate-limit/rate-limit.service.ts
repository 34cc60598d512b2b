import { createHash } from 'node:crypto';
import { HttpException, HttpStatus, Inject, Injectable, type ExecutionContext, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { ProblemException } from '../http/problem.js';
import { FailOpenRedis } from './fail-open-redis.js';
import { CONSUME_SCRIPT, FAILURE_SCRIPT, RETURN_SCRIPT } from './rate-limit.scripts.js';

/** Which credential authenticated the request: each kind has its own limit. */
export type PrincipalKind = 'api_key' | 'id_token';
type RejectionReason = PrincipalKind | 'auth_failures';

export const RATE_LIMIT_WINDOW_MS = 60_000;
/** Addresses this replica knows to be blocked, refused without a Redis round trip. */
const MAX_BLOCKED_ADDRESSES = 10_000;
const READY_WAIT_MS = 3000;
/**
 * A replica takes tokens from a principal's shared bucket a lease at a time — a thousandth of
 * the per-minute limit (1 for small limits, so those stay exact) — and serves the next requests
 * of that principal from the lease for at most LEASE_MS, without a Redis round trip. A busy
 * principal then costs about one round trip per lease per replica instead of one per request.
 * One lease per principal is taken at a time: requests that find the lease spent wait for the
 * one acquisition in flight and share what it brings (before, each of them took a lease of its
 * own and all but the last were lost, which charged a busy key many times what it used). The
 * tokens a lease did not use by the time it expires are given back to the bucket. The price:
 * replicas may admit up to (replicas × lease) more than the limit in a window, and an address
 * blocked for failures on another replica is refused once the lease of its principal runs out
 * (this replica refuses it at once).
 */
const LEASE_FRACTION = 1000;
const LEASE_MS = 1000;
const MAX_LEASES = 100_000;
/**
 * Without a limit for the principal (RATE_LIMIT_PER_KEY_PER_MINUTE or …_PER_TOKEN_… = 0) there
 * is no lease, only the address's failure bucket to check: an address Redis found not blocked is
 * not asked about again for LEASE_MS (the staleness a lease has), instead of a round trip per
 * request. This replica's own failures still block at once (`blocked`).
 */
const MAX_CLEAR_ADDRESSES = 100_000;

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

/** What CONSUME_SCRIPT answers: code, remaining, retry_ms, reset_ms, granted. */
type ConsumeResult = [number, number, number, number, number];

interface LimiterCommands {
  rateLimitConsume(principalKey: string, failureKey: string, limit: number, failureLimit: number, windowMs: number, wanted: number): Promise<ConsumeResult>;
  rateLimitFailure(failureKey: string, failureLimit: number, windowMs: number): Promise<[number, number]>;
  rateLimitReturn(principalKey: string, limit: number, windowMs: number, returned: number): Promise<number>;
}

/** Tokens this replica holds for a principal: what is left, until when, what Redis said was left besides. */
interface Lease {
  left: number;
  until: number;
  shared: number;
  resetMs: number;
}

/** The answer of one lease acquisition, shared by the requests that waited for it. */
interface Acquisition {
  result: ConsumeResult;
  /** The address whose failure bucket the call checked (code 2 is about it only). */
  address: string;
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

/**
 * The prefix of a deployment's keys in Redis: `weave:` (the only keys the ACL user may touch)
 * and the namespace in braces (a Redis Cluster hash tag: a script's keys share one slot).
 */
export function redisKeyPrefix(area: string, databaseUrl: string): string {
  return `weave:${area}:{${rateLimitNamespace(databaseUrl)}}`;
}

/** A client address as a key part: an IP as it is; anything else (a forwarded header's odd value) hashed, so a key stays short. */
export function addressKeyPart(address: string): string {
  const plain = address.length <= 45 && /^[0-9A-Fa-f:.]+$/.test(address);
  return plain ? address : createHash('sha256').update(address).digest('base64url');
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
 * protect is limited, including routes added later. One Redis round trip per lease (see
 * LEASE_FRACTION; per request for limits under 2,000 a minute; without a principal limit, one
 * per address and LEASE_MS, see MAX_CLEAR_ADDRESSES): the principal's bucket and the
 * address's failure bucket are read in the same script, after the credential was checked
 * (in-process cache); a failure costs one round trip instead. An address this replica has seen
 * blocked is refused before its credential is looked at, without Redis.
 *
 * Redis unavailable (down, slow beyond RATE_LIMIT_REDIS_TIMEOUT_MS): requests pass (fail open,
 * availability over limiting), counted in weave_rate_limit_fail_open_total and logged at most
 * every 10 s; after an error Redis is left alone for a second (FailOpenRedis).
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly redis: FailOpenRedis<LimiterCommands>;
  private readonly prefix: string;
  private readonly blocked = new Map<string, number>();
  /** Leases by principal key, oldest first (a renewed lease moves to the end). */
  private readonly leases = new Map<string, Lease>();
  /** The one lease acquisition in flight per principal key. */
  private readonly acquiring = new Map<string, Promise<Acquisition | undefined>>();
  /** Addresses Redis found not blocked, until when that answer is used (no principal limit: see MAX_CLEAR_ADDRESSES), oldest first. */
  private readonly clearAddresses = new Map<string, number>();
  private readonly enabled: boolean;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.prefix = redisKeyPrefix('ratelimit', env.DATABASE_URL);
    this.enabled = env.RATE_LIMIT_PER_KEY_PER_MINUTE > 0 || env.RATE_LIMIT_PER_TOKEN_PER_MINUTE > 0 || env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE > 0;
    this.redis = new FailOpenRedis<LimiterCommands>({
      url: env.REDIS_URL,
      tlsCaFile: env.REDIS_TLS_CA_FILE,
      name: 'gateway-rate-limit',
      timeoutMs: env.RATE_LIMIT_REDIS_TIMEOUT_MS,
      lazy: !this.enabled,
      scripts: {
        rateLimitConsume: { numberOfKeys: 2, lua: CONSUME_SCRIPT },
        rateLimitFailure: { numberOfKeys: 1, lua: FAILURE_SCRIPT },
        rateLimitReturn: { numberOfKeys: 1, lua: RETURN_SCRIPT },
      },
      logger,
      countFailOpen: () => failOpens.inc(),
      warning: 'rate limiter: Redis unavailable, requests pass unlimited',
    });
  }

  /** Waits (briefly) for Redis, so the first requests after start are limited too; never fails the start. */
  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    this.sweeper = setInterval(() => this.returnExpiredLeases(), LEASE_MS).unref();
    if (!(await this.redis.ready(READY_WAIT_MS))) this.logger.warn('rate-limit Redis not reachable at start: requests pass unlimited until it is');
  }

  /** Gives back what the leases did not use, then closes the connection. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    for (const [key, lease] of this.leases) this.giveBack(key, lease);
    this.leases.clear();
    await this.redis.close();
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
    // The breaker (Redis failed within the last second) is asked only where Redis would be: a
    // request served from a lease or a recent address check was checked, not let through unchecked.
    if (limit === 0 && failureLimit === 0) return;
    const key = this.principalKey(kind, principal);
    if (limit === 0) {
      // Only the address's failure bucket to check, at most once per LEASE_MS: nothing to lease.
      const clearUntil = this.clearAddresses.get(address);
      if (clearUntil !== undefined && clearUntil > Date.now()) return;
      const result = await this.redis.run((redis) => redis.rateLimitConsume(key, this.failureKey(address), 0, failureLimit, RATE_LIMIT_WINDOW_MS, 1));
      if (result?.[0] === 2) throw this.blockedByFailures(address, result[2]);
      if (result) this.keepClear(address);
      return;
    }
    for (;;) {
      const lease = this.leases.get(key);
      if (lease && lease.left > 0 && lease.until > Date.now()) {
        lease.left--;
        this.rateLimitHeaders(reply, limit, lease.shared + lease.left, lease.resetMs);
        return;
      }
      const acquisition = await this.acquire(key, limit, failureLimit, address);
      if (!acquisition) return; // Redis did not answer: fail open
      const [code, , retryMs] = acquisition.result;
      if (code === 2) {
        // The address of the request that asked is blocked; a waiter from another address asks again with its own.
        if (acquisition.address === address) throw this.blockedByFailures(address, retryMs);
        continue;
      }
      if (code === 1) {
        this.rateLimitHeaders(reply, limit, 0, acquisition.result[3]);
        throw this.reject(kind, retryMs);
      }
      // code 0: a new lease is in place; take a token from it (or, when the requests that
      // waited with this one took them all, ask again).
    }
  }

  /** The lease acquisition of this principal in flight, or a new one (single flight per principal). */
  private acquire(key: string, limit: number, failureLimit: number, address: string): Promise<Acquisition | undefined> {
    let pending = this.acquiring.get(key);
    if (!pending) {
      pending = this.requestLease(key, limit, failureLimit, address).finally(() => this.acquiring.delete(key));
      this.acquiring.set(key, pending);
    }
    return pending;
  }

  private async requestLease(key: string, limit: number, failureLimit: number, address: string): Promise<Acquisition | undefined> {
    const spent = this.leases.get(key);
    if (spent) {
      // Expired with tokens left: they go back to the bucket first (same connection, so Redis runs it before the request below).
      this.leases.delete(key);
      this.giveBack(key, spent);
    }
    const wanted = Math.max(1, Math.floor(limit / LEASE_FRACTION));
    const result = await this.redis.run((redis) => redis.rateLimitConsume(key, this.failureKey(address), limit, failureLimit, RATE_LIMIT_WINDOW_MS, wanted));
    if (!result) return undefined;
    const [code, remaining, , resetMs, granted] = result;
    if (code === 0) this.keepLease(key, { left: granted, until: Date.now() + LEASE_MS, shared: remaining, resetMs });
    return { result, address };
  }

  /** Returns the tokens `lease` did not use to the principal's bucket (not awaited: a lost return only under-admits). */
  private giveBack(key: string, lease: Lease): void {
    if (lease.left <= 0) return;
    const limit = key.startsWith(`${this.prefix}:key:`) ? this.env.RATE_LIMIT_PER_KEY_PER_MINUTE : this.env.RATE_LIMIT_PER_TOKEN_PER_MINUTE;
    if (limit === 0) return;
    const left = lease.left;
    lease.left = 0;
    void this.redis.run((redis) => redis.rateLimitReturn(key, limit, RATE_LIMIT_WINDOW_MS, left), false);
  }

  /** Every second: leases that expired are dropped, and what they did not use is given back; expired clear addresses go. */
  private returnExpiredLeases(): void {
    const now = Date.now();
    for (const [address, until] of this.clearAddresses) {
      if (until > now) break;
      this.clearAddresses.delete(address);
    }
    for (const [key, lease] of this.leases) {
      // Leases are kept oldest first and all last LEASE_MS: the first one still valid ends the sweep.
      if (lease.until > now) break;
      if (this.acquiring.has(key)) continue; // requestLease gives it back itself
      this.leases.delete(key);
      this.giveBack(key, lease);
    }
  }

  private rateLimitHeaders(reply: FastifyReply, limit: number, remaining: number, resetMs: number): void {
    void reply.header('RateLimit-Limit', String(limit)).header('RateLimit-Remaining', String(Math.max(0, remaining))).header('RateLimit-Reset', seconds(resetMs));
  }

  private keepLease(key: string, lease: Lease): void {
    this.leases.delete(key); // re-inserted at the end: the map stays ordered by expiry
    if (this.leases.size >= MAX_LEASES) {
      // Oldest first out (Map keeps insertion order); its unused tokens go back.
      const [oldestKey, oldest] = this.leases.entries().next().value as [string, Lease];
      this.leases.delete(oldestKey);
      this.giveBack(oldestKey, oldest);
    }
    this.leases.set(key, lease);
  }

  private keepClear(address: string): void {
    this.clearAddresses.delete(address); // re-inserted at the end: the map stays ordered by expiry
    if (this.clearAddresses.size >= MAX_CLEAR_ADDRESSES) this.clearAddresses.delete(this.clearAddresses.keys().next().value as string);
    this.clearAddresses.set(address, Date.now() + LEASE_MS);
  }

  /** The error the guard answers after `error`: a 401 is counted against the address, and may become a 429. */
  private async afterFailure(error: unknown, address: string): Promise<unknown> {
    const limit = this.env.AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE;
    if (!(error instanceof HttpException) || error.getStatus() !== HttpStatus.UNAUTHORIZED || limit === 0) return error;
    const result = await this.redis.run((redis) => redis.rateLimitFailure(this.failureKey(address), limit, RATE_LIMIT_WINDOW_MS));
    if (!result) return error;
    const [code, blockedMs] = result;
    if (blockedMs > 0) this.block(address, blockedMs);
    // Already blocked (another replica counted the failures): answered as if refused up front.
    return code === 1 ? this.reject('auth_failures', blockedMs) : error;
  }

  private blockedByFailures(address: string, retryMs: number): HttpException {
    this.block(address, retryMs);
    return this.reject('auth_failures', retryMs);
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
    return `${this.prefix}:fail:${addressKeyPart(address)}`;
  }
}
