/** What the shared store answers when asked for tokens of a principal's bucket. */
export type LeaseAnswer =
  | { allowed: true; granted: number; remaining: number; resetMs: number }
  | { allowed: false; retryMs: number; resetMs: number };

/** The shared buckets (Redis in production, a model in unit tests). */
export interface LeaseStore {
  /** Takes 1 to `wanted` tokens of the bucket `key` (of `limit` a window); undefined when the store did not answer. */
  take(key: string, limit: number, wanted: number): Promise<LeaseAnswer | undefined>;
  /** Gives back `tokens` taken from `key` and not used (not awaited: one lost only under-admits). */
  giveBack(key: string, limit: number, tokens: number): void;
}

/** A request of a principal admitted (with what its bucket has left) or refused; undefined: the store did not answer. */
export type Admission = { allowed: true; remaining: number; resetMs: number } | { allowed: false; retryMs: number; resetMs: number };

export interface LeaseBookOptions {
  /** A lease is a `limit / fraction` tokens (at least 1). */
  fraction: number;
  /** How long a lease may be used. */
  leaseMs: number;
  /** Most leases kept (oldest given back first). */
  maxLeases: number;
  now?: () => number;
}

/** Tokens this replica holds for a principal: what is left, until when, what the store said was left besides. */
interface Lease {
  limit: number;
  left: number;
  until: number;
  shared: number;
  resetMs: number;
}

/**
 * Leases of a principal's tokens, so that a busy principal costs a store round trip per lease
 * instead of one per request. A replica takes tokens from the principal's shared bucket a lease
 * at a time — `limit / fraction` (1 for small limits, which so stay exact) — and serves the
 * next requests of that principal from the lease for at most `leaseMs`.
 *
 * One lease per principal is taken at a time: requests that find the lease spent wait for the
 * one acquisition in flight and share what it brings (were each to take a lease of its own, all
 * but the last would be lost, charging a busy principal many times what it used). The tokens a
 * lease did not use by the time it expires are given back (`sweep`, or before the next lease is
 * asked for). The price: replicas may admit up to (replicas × lease) more than the limit in a
 * window.
 *
 * No I/O of its own: the store is given, so the algorithm is tested against a model.
 */
export class LeaseBook {
  /** Leases by principal key, oldest first (a renewed lease moves to the end). */
  private readonly leases = new Map<string, Lease>();
  /** The one lease acquisition in flight per principal key. */
  private readonly acquiring = new Map<string, Promise<LeaseAnswer | undefined>>();
  private readonly now: () => number;

  constructor(
    private readonly store: LeaseStore,
    private readonly options: LeaseBookOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Admits one request of the principal `key` under `limit` (> 0) a window, from its lease or a new one. */
  async admit(key: string, limit: number): Promise<Admission | undefined> {
    for (;;) {
      const lease = this.leases.get(key);
      if (lease && lease.left > 0 && lease.until > this.now()) {
        lease.left--;
        return { allowed: true, remaining: lease.shared + lease.left, resetMs: lease.resetMs };
      }
      const answer = await this.acquire(key, limit);
      if (!answer) return undefined;
      if (!answer.allowed) return answer;
      // A new lease is in place: take a token from it (or, when the requests that waited with
      // this one took them all, ask again).
    }
  }

  /** Drops the leases that expired and gives back what they did not use (called every `leaseMs`). */
  sweep(): void {
    const now = this.now();
    for (const [key, lease] of this.leases) {
      // Kept oldest first, all lasting leaseMs: the first one still valid ends the sweep.
      if (lease.until > now) break;
      if (this.acquiring.has(key)) continue; // renew() gives it back itself
      this.leases.delete(key);
      this.giveBack(key, lease);
    }
  }

  /** Gives back what every lease did not use (at shutdown). */
  close(): void {
    for (const [key, lease] of this.leases) this.giveBack(key, lease);
    this.leases.clear();
  }

  /** The lease acquisition of this principal in flight, or a new one (single flight per principal). */
  private acquire(key: string, limit: number): Promise<LeaseAnswer | undefined> {
    let pending = this.acquiring.get(key);
    if (!pending) {
      pending = this.renew(key, limit).finally(() => this.acquiring.delete(key));
      this.acquiring.set(key, pending);
    }
    return pending;
  }

  private async renew(key: string, limit: number): Promise<LeaseAnswer | undefined> {
    const spent = this.leases.get(key);
    if (spent) {
      // Expired with tokens left: they go back first (a store that keeps order runs it before the request below).
      this.leases.delete(key);
      this.giveBack(key, spent);
    }
    const answer = await this.store.take(key, limit, Math.max(1, Math.floor(limit / this.options.fraction)));
    if (answer?.allowed) this.keep(key, { limit, left: answer.granted, until: this.now() + this.options.leaseMs, shared: answer.remaining, resetMs: answer.resetMs });
    return answer;
  }

  private keep(key: string, lease: Lease): void {
    this.leases.delete(key); // re-inserted at the end: the map stays ordered by expiry
    if (this.leases.size >= this.options.maxLeases) {
      const [oldestKey, oldest] = this.leases.entries().next().value as [string, Lease];
      this.leases.delete(oldestKey);
      this.giveBack(oldestKey, oldest);
    }
    this.leases.set(key, lease);
  }

  private giveBack(key: string, lease: Lease): void {
    if (lease.left <= 0) return;
    const left = lease.left;
    lease.left = 0;
    this.store.giveBack(key, lease.limit, left);
  }
}
