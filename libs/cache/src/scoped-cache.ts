import { LRUCache } from 'lru-cache';

/**
 * Bytes counted for every entry on top of its key and value: lru-cache's slots for it (key,
 * value, list links, size, TTL start and length), the map entry and our slot object. A rough
 * figure on purpose: what matters is that a million tiny entries cannot hide behind a byte bound
 * that only counts values.
 */
export const ENTRY_OVERHEAD_BYTES = 128;

/** How a fetch was answered: a kept entry, a load already in flight, or a load of its own. */
export type LookupOutcome = 'hit' | 'shared' | 'miss';

export interface ScopedCacheOptions<V> {
  /** Most entries kept, least recently used out first. 0: the cache keeps nothing. */
  maxEntries: number;
  /**
   * Most bytes kept, least recently used out first. An entry counts its key, its value
   * (`sizeOf`) and ENTRY_OVERHEAD_BYTES; one larger than the whole bound is not kept.
   * Omitted: bounded by entries only. 0: the cache keeps nothing.
   */
  maxBytes?: number;
  /** Bytes of a value (default 0: only the key and the overhead count). */
  sizeOf?: (value: V) => number;
  /** Longest an entry is served after it was stored, in ms. ≤ 0: the cache keeps nothing. */
  ttlMs: number;
  /** Called once per fetch with how it was answered (for metrics). */
  onLookup?: (outcome: LookupOutcome) => void;
  /** The clock for TTLs, in ms (tests pass a fake one). Default: performance.now(). */
  now?: () => number;
}

export interface FetchOptions<V> {
  /** Whether a loaded value may be kept (default: always). Not kept, it is still returned. */
  keep?: (value: V) => boolean;
  /**
   * The scope a loaded value is kept in, when only the value tells (the gateway keeps a key
   * lookup in its platform's scope). Default, or undefined: the fetch's scope. The entry is still
   * found by the fetch's scope and key; `invalidate` of the scope it is kept in drops it. Whether
   * the value is kept at all still depends on the fetch's scope only: invalidate that scope too
   * when a change may concern loads in flight.
   */
  keepIn?: (value: V) => string | undefined;
}

export interface ScopedCacheStats {
  entries: number;
  /** Counted as the byte bound counts them: keys, values and per-entry overhead. */
  bytes: number;
  /** Scopes holding at least one entry. */
  scopes: number;
}

interface Slot<V> {
  readonly scope: string;
  readonly value: V;
}

interface Load<V> {
  readonly scope: string;
  readonly fullKey: string;
  readonly generation: number;
  readonly epoch: number;
  promise?: Promise<V>;
}

interface ScopeLoads {
  /** Bumped by every invalidation of the scope: a load that began before it is not kept. */
  generation: number;
  /** Loads of the scope in flight (the state is dropped when none is left: its generation no longer matters). */
  inFlight: number;
}

/**
 * A bounded in-process cache of values grouped in scopes (a platform), on lru-cache.
 *
 * lru-cache holds the entries: least-recently-used order, the entry and byte bounds, TTLs. This
 * class adds what our caches need around it:
 * - single-flight loads: concurrent misses of one key share one load; a failed load is not kept
 *   and the next miss loads again;
 * - scopes: `invalidate(scope)` drops a scope's entries, `flush()` drops everything;
 * - a generation per scope and an epoch for flushes: a load that was in flight across an
 *   invalidation of its scope (or a flush) still answers its callers but is not kept (its answer
 *   may predate the change), and a miss after the invalidation does not join it.
 * (lru-cache's own `fetch()` is single-flight too, but deleting a key aborts the load and rejects
 * its callers, and it knows no scopes.)
 */
export class ScopedCache<V> {
  private readonly entries?: LRUCache<string, Slot<V>>;
  /** The entries of each scope, as lru-cache holds them (kept in step by its dispose hook). */
  private readonly byScope = new Map<string, Map<string, Slot<V>>>();
  /** Loads a miss may join: not invalidated nor flushed since they began. */
  private readonly loads = new Map<string, Load<V>>();
  private readonly scopeLoads = new Map<string, ScopeLoads>();
  private epoch = 0;

  constructor(private readonly options: ScopedCacheOptions<V>) {
    const { maxEntries, maxBytes, ttlMs, sizeOf, now } = options;
    if (ttlMs <= 0 || maxEntries <= 0 || maxBytes === 0) return;
    this.entries = new LRUCache<string, Slot<V>>({
      max: maxEntries,
      // Always sized, so that stats() reports bytes even without a byte bound.
      maxSize: maxBytes ?? Number.MAX_SAFE_INTEGER,
      sizeCalculation: (slot, fullKey) => ENTRY_OVERHEAD_BYTES + Buffer.byteLength(fullKey) + Math.max(0, Math.ceil(sizeOf?.(slot.value) ?? 0)),
      ttl: ttlMs,
      ...(now ? { perf: { now }, ttlResolution: 0 } : {}),
      dispose: (slot, fullKey) => this.unindex(slot, fullKey),
    });
  }

  /** False when the options keep nothing: every fetch then loads, unshared. */
  get enabled(): boolean {
    return this.entries !== undefined;
  }

  /** The value kept for `key` of `scope`, if any and not expired (it becomes the most recently used). */
  get(scope: string, key: string): V | undefined {
    return this.entries?.get(fullKeyOf(scope, key))?.value;
  }

  /**
   * The value for `key` of `scope`: kept, else from the load in flight for it, else from `load`
   * (kept unless it failed, `keep` refuses it, or its scope was invalidated meanwhile).
   * `T` lets a cache of several value types name the one a key always loads.
   */
  fetch<T extends V = V>(scope: string, key: string, load: () => Promise<T>, options: FetchOptions<T> = {}): Promise<T> {
    if (!this.entries) {
      this.options.onLookup?.('miss');
      return load();
    }
    const fullKey = fullKeyOf(scope, key);
    const slot = this.entries.get(fullKey);
    if (slot) {
      this.options.onLookup?.('hit');
      return Promise.resolve(slot.value as T);
    }
    const joined = this.loads.get(fullKey);
    if (joined?.promise) {
      this.options.onLookup?.('shared');
      return joined.promise as Promise<T>;
    }
    this.options.onLookup?.('miss');
    let state = this.scopeLoads.get(scope);
    if (!state) this.scopeLoads.set(scope, (state = { generation: 0, inFlight: 0 }));
    state.inFlight += 1;
    const pending: Load<V> = { scope, fullKey, generation: state.generation, epoch: this.epoch };
    this.loads.set(fullKey, pending);
    const promise = this.settle(pending, state, load, options);
    pending.promise = promise;
    return promise;
  }

  /** Keeps `value` for `key` of `scope` now; false when it is not kept (disabled, or larger than the byte bound). */
  set(scope: string, key: string, value: V): boolean {
    return this.store(scope, fullKeyOf(scope, key), value, false);
  }

  /**
   * Counts a kept value again after it grew or shrank (the gateway adds compressed forms to a
   * reply). Its TTL keeps running from when it was stored. Nothing happens unless `value` is
   * still what is kept for the key.
   */
  remeasure(scope: string, key: string, value: V): void {
    const fullKey = fullKeyOf(scope, key);
    if (this.entries?.peek(fullKey)?.value === value) this.store(scope, fullKey, value, true);
  }

  /** Drops the entries of `scope`; its loads in flight will neither be joined nor kept. */
  invalidate(scope: string): void {
    const state = this.scopeLoads.get(scope);
    if (state) {
      state.generation += 1;
      for (const [fullKey, pending] of this.loads) if (pending.scope === scope) this.loads.delete(fullKey);
    }
    const kept = this.byScope.get(scope);
    if (kept) for (const fullKey of [...kept.keys()]) this.entries?.delete(fullKey);
  }

  /** Drops everything; no load in flight will be joined or kept. */
  flush(): void {
    this.epoch += 1;
    this.loads.clear();
    this.entries?.clear();
  }

  stats(): ScopedCacheStats {
    return { entries: this.entries?.size ?? 0, bytes: this.entries?.calculatedSize ?? 0, scopes: this.byScope.size };
  }

  private async settle<T extends V>(pending: Load<V>, state: ScopeLoads, load: () => Promise<T>, options: FetchOptions<T>): Promise<T> {
    try {
      const value = await load();
      // An invalidation or flush came while loading: the value may predate it.
      const current = state.generation === pending.generation && this.epoch === pending.epoch;
      if (current && (options.keep?.(value) ?? true)) this.store(options.keepIn?.(value) ?? pending.scope, pending.fullKey, value, false);
      return value;
    } finally {
      if (this.loads.get(pending.fullKey) === pending) this.loads.delete(pending.fullKey);
      state.inFlight -= 1;
      if (state.inFlight === 0 && this.scopeLoads.get(pending.scope) === state) this.scopeLoads.delete(pending.scope);
    }
  }

  private store(scope: string, fullKey: string, value: V, keepTtl: boolean): boolean {
    if (!this.entries) return false;
    const slot: Slot<V> = { scope, value };
    // lru-cache disposes of what this replaces or evicts (unindexing it) before it returns.
    this.entries.set(fullKey, slot, { noUpdateTTL: keepTtl });
    if (this.entries.peek(fullKey) !== slot) return false;
    let kept = this.byScope.get(scope);
    if (!kept) this.byScope.set(scope, (kept = new Map()));
    kept.set(fullKey, slot);
    return true;
  }

  private unindex(slot: Slot<V>, fullKey: string): void {
    const kept = this.byScope.get(slot.scope);
    if (kept?.get(fullKey) !== slot) return;
    kept.delete(fullKey);
    if (kept.size === 0) this.byScope.delete(slot.scope);
  }
}

function fullKeyOf(scope: string, key: string): string {
  return `${scope}\u0000${key}`;
}
