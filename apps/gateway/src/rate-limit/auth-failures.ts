import { HttpException, HttpStatus } from '@nestjs/common';
import { clientAddressKey } from './client-address.js';
import type { RateLimitStore } from './rate-limit.store.js';
import { rateLimited } from './rate-limited.exception.js';

/** Addresses this replica knows to be blocked (oldest dropped first beyond this). */
const MAX_BLOCKED_ADDRESSES = 10_000;

/** Runs a credential's database lookup (the caller's cache is consulted before, without it). */
export type LookupGate = <T>(lookup: () => Promise<T>) => Promise<T>;

/**
 * Failed authentications per client address (`request.ip`; IPv6 by RATE_LIMIT_IPV6_PREFIX):
 * AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE in a bucket shared by the replicas through Redis.
 *
 * Only failures are throttled: the credential is checked first, a valid one is served whatever
 * its address did (its principal's own limits apply), and the address's bucket is charged, or
 * found full, only when the credential failed (401). Once full, the address's failures are
 * answered 429 instead of 401 until the bucket has room again; this replica then answers them
 * without asking Redis.
 *
 * What bounds the lookups a blocked address can cause: a credential of the wrong shape fails
 * before any lookup, a repeated one is answered by the identity cache (negative answers
 * included), and the database lookups of new ones from an address this replica knows to be
 * blocked run one at a time per address (`gate`): that address's guesses hold at most one
 * database connection per replica, and a valid key sent from it waits its turn, but is served.
 */
export class AuthFailures {
  /** Blocked address keys and until when (this replica's knowledge), oldest first. */
  private readonly blocked = new Map<string, number>();
  /** The last lookup queued per blocked address key. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Pick<RateLimitStore, 'failure'>,
    private readonly limit: number,
    private readonly ipv6Prefix: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** For a client this replica knows to be blocked: the gate its credential lookups go through; otherwise undefined. */
  gate(address: string): LookupGate | undefined {
    if (this.blocked.size === 0) return undefined;
    const key = clientAddressKey(address, this.ipv6Prefix);
    if (this.blockedFor(key) <= 0) return undefined;
    return (lookup) => this.serially(key, lookup);
  }

  /**
   * The error to answer after the authentication of a request from `address` failed with
   * `error`: a 401 is counted against the address (when it is not blocked already) and becomes
   * a 429 while the address is blocked. Other errors (403, 503) are answered as they are.
   */
  async afterFailure(error: unknown, address: string): Promise<unknown> {
    if (this.limit === 0 || !(error instanceof HttpException) || error.getStatus() !== HttpStatus.UNAUTHORIZED) return error;
    const key = clientAddressKey(address, this.ipv6Prefix);
    const left = this.blockedFor(key);
    if (left > 0) return rateLimited('auth_failures', left);
    const result = await this.store.failure(key, this.limit);
    if (!result) return error;
    if (result.blockedMs > 0) this.block(key, result.blockedMs);
    // Already blocked (failures counted by another replica): answered like any failure of a blocked address.
    return result.counted ? error : rateLimited('auth_failures', result.blockedMs);
  }

  private blockedFor(key: string): number {
    const until = this.blocked.get(key);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left <= 0) this.blocked.delete(key);
    return left;
  }

  private block(key: string, ms: number): void {
    this.blocked.delete(key); // re-inserted at the end: the oldest entry goes first
    if (this.blocked.size >= MAX_BLOCKED_ADDRESSES) this.blocked.delete(this.blocked.keys().next().value as string);
    this.blocked.set(key, this.now() + ms);
  }

  /** Runs `task` after every task queued for `key` before it has settled. */
  private serially<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const settled = result.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return result;
  }
}
