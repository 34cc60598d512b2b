import fc from 'fast-check';
import { ENTRY_OVERHEAD_BYTES, ScopedCache, type LookupOutcome, type ScopedCacheOptions } from '#libs/cache';

/** A clock the test moves by hand (lru-cache treats a start time of 0 as "none": begin later). */
function fakeClock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** A load the test settles by hand. */
function gate<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject, load: () => promise };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));
/** What an entry of `scope`/`key` with a value of `valueBytes` counts against the byte bound. */
const cost = (scope: string, key: string, valueBytes = 0) => ENTRY_OVERHEAD_BYTES + Buffer.byteLength(`${scope}\u0000${key}`) + valueBytes;

describe('ScopedCache', () => {
  const make = <V>(options: Partial<ScopedCacheOptions<V>> = {}) => new ScopedCache<V>({ maxEntries: 100, ttlMs: 1_000, ...options });

  it('serves a kept value until its TTL has passed, then loads again', async () => {
    const clock = fakeClock();
    const cache = make<string>({ ttlMs: 500, now: clock.now });
    expect(await cache.fetch('p', 'k', async () => 'first')).toBe('first');
    clock.advance(500);
    expect(await cache.fetch('p', 'k', async () => 'second')).toBe('first');
    clock.advance(1);
    expect(await cache.fetch('p', 'k', async () => 'second')).toBe('second');
  });

  it('shares one load between concurrent misses of a key, and reports how each fetch was answered', async () => {
    const outcomes: LookupOutcome[] = [];
    const cache = make<string>({ onLookup: (outcome) => outcomes.push(outcome) });
    const slow = gate<string>();
    let loads = 0;
    const load = () => (loads++, slow.promise);
    const both = Promise.all([cache.fetch('p', 'k', load), cache.fetch('p', 'k', load)]);
    slow.resolve('v');
    expect(await both).toEqual(['v', 'v']);
    expect(await cache.fetch('p', 'k', load)).toBe('v');
    expect(loads).toBe(1);
    expect(outcomes).toEqual(['miss', 'shared', 'hit']);
  });

  it('keeps no failure: the callers of a failed load see the error, the next miss loads again', async () => {
    const cache = make<string>();
    const failing = gate<string>();
    const first = cache.fetch('p', 'k', failing.load);
    const joined = cache.fetch('p', 'k', failing.load);
    failing.reject(new Error('database down'));
    await expect(first).rejects.toThrow('database down');
    await expect(joined).rejects.toThrow('database down');
    expect(cache.stats().entries).toBe(0);
    expect(await cache.fetch('p', 'k', async () => 'ok')).toBe('ok');
  });

  it('does not keep a load that raced with an invalidation of its scope, nor let a later miss join it', async () => {
    const cache = make<string>();
    const old = gate<string>();
    const other = gate<string>();
    const raced = cache.fetch('p', 'k', old.load);
    const untouched = cache.fetch('q', 'k', other.load);
    cache.invalidate('p');
    const after = cache.fetch('p', 'k', async () => 'new');
    old.resolve('old');
    other.resolve('other');
    expect(await raced).toBe('old');
    expect(await after).toBe('new');
    expect(await untouched).toBe('other');
    await settled();
    // The load that began after the invalidation was kept, and so was the other scope's.
    expect(await cache.fetch('p', 'k', async () => 'newer')).toBe('new');
    expect(await cache.fetch('q', 'k', async () => 'newer')).toBe('other');
  });

  it('drops only the invalidated scope', async () => {
    const cache = make<string>();
    await cache.fetch('p', 'a', async () => 'pa');
    await cache.fetch('p', 'b', async () => 'pb');
    await cache.fetch('q', 'a', async () => 'qa');
    expect(cache.stats()).toMatchObject({ entries: 3, scopes: 2 });
    cache.invalidate('p');
    expect(cache.stats()).toMatchObject({ entries: 1, scopes: 1 });
    expect(cache.get('p', 'a')).toBeUndefined();
    expect(cache.get('q', 'a')).toBe('qa');
  });

  it('flushes everything, and keeps no load that was in flight across the flush', async () => {
    const cache = make<string>();
    await cache.fetch('p', 'a', async () => 'pa');
    const inFlight = gate<string>();
    const raced = cache.fetch('q', 'a', inFlight.load);
    cache.flush();
    inFlight.resolve('old');
    expect(await raced).toBe('old');
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0, scopes: 0 });
  });

  it('counts the key and a per-entry overhead against the byte bound, not only the value', async () => {
    // Room for three entries with empty values: a bound counting only values would hold them all.
    const cache = make<string>({ maxBytes: 3 * cost('p', 'k0'), sizeOf: () => 0 });
    for (let i = 0; i < 10; i++) await cache.fetch('p', `k${i}`, async () => '');
    expect(cache.stats()).toEqual({ entries: 3, bytes: 3 * cost('p', 'k0'), scopes: 1 });
    // Least recently used out first: k7, k8, k9 are what is left.
    expect(['k7', 'k8', 'k9'].map((key) => cache.get('p', key))).toEqual(['', '', '']);
  });

  it('holds at most maxEntries, least recently used out first', async () => {
    const cache = make<string>({ maxEntries: 2 });
    await cache.fetch('p', 'a', async () => 'a');
    await cache.fetch('p', 'b', async () => 'b');
    expect(cache.get('p', 'a')).toBe('a'); // a is now the most recent
    await cache.fetch('p', 'c', async () => 'c');
    expect([cache.get('p', 'a'), cache.get('p', 'b'), cache.get('p', 'c')]).toEqual(['a', undefined, 'c']);
  });

  it('passes a value larger than the whole byte bound through without keeping it', async () => {
    const cache = make<Buffer>({ maxBytes: 1_000, sizeOf: (value) => value.length });
    expect((await cache.fetch('p', 'huge', async () => Buffer.alloc(1_000))).length).toBe(1_000);
    expect(cache.stats().entries).toBe(0);
  });

  it('returns but does not keep what `keep` refuses', async () => {
    const cache = make<string>();
    expect(await cache.fetch('p', 'k', async () => 'small', { keep: (value) => value.length > 5 })).toBe('small');
    expect(cache.stats().entries).toBe(0);
  });

  it('keeps a value in the scope `keepIn` names: found by its fetch scope, dropped with the scope it is kept in', async () => {
    const cache = make<string>();
    const keepIn = (value: string) => (value.startsWith('a') ? 'agent_a' : undefined);
    expect(await cache.fetch('keys', 'k1', async () => 'a1', { keepIn })).toBe('a1');
    expect(await cache.fetch('keys', 'k2', async () => 'b1', { keepIn })).toBe('b1');
    expect(cache.stats()).toMatchObject({ entries: 2, scopes: 2 });
    expect(await cache.fetch('keys', 'k1', async () => 'a2', { keepIn })).toBe('a1');
    cache.invalidate('agent_a');
    expect(cache.get('keys', 'k1')).toBeUndefined();
    expect(cache.get('keys', 'k2')).toBe('b1');
    // Kept in the fetch scope when keepIn names none: that scope's invalidation drops it.
    cache.invalidate('keys');
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0, scopes: 0 });
    // A load in flight across an invalidation of its fetch scope is not kept, wherever it would have gone.
    const raced = gate<string>();
    const pending = cache.fetch('keys', 'k1', raced.load, { keepIn });
    cache.invalidate('keys');
    raced.resolve('a3');
    expect(await pending).toBe('a3');
    expect(cache.stats().entries).toBe(0);
  });

  it('counts a kept value again when it grows, its TTL still running from when it was stored', async () => {
    const clock = fakeClock();
    const value = { bytes: 100 };
    const cache = make<{ bytes: number }>({ ttlMs: 500, now: clock.now, maxBytes: 2 * cost('p', 'a', 100) + 50, sizeOf: (v) => v.bytes });
    await cache.fetch('p', 'a', async () => value);
    await cache.fetch('p', 'b', async () => ({ bytes: 100 }));
    clock.advance(300);
    value.bytes += 50;
    cache.remeasure('p', 'a', value);
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 2 * cost('p', 'a', 100) + 50 });
    // It grows past what both can share: b, now the least recently used, goes.
    value.bytes += 1;
    cache.remeasure('p', 'a', value);
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: cost('p', 'a', 151) });
    clock.advance(201);
    expect(cache.get('p', 'a')).toBeUndefined();
    // A value no longer kept is not counted again.
    cache.remeasure('p', 'a', value);
    expect(cache.stats().entries).toBe(0);
  });

  it.each([
    ['ttlMs', { ttlMs: 0 }],
    ['maxEntries', { maxEntries: 0 }],
    ['maxBytes', { maxBytes: 0 }],
  ])('keeps and shares nothing with %s 0', async (_name, options) => {
    const cache = make<number>(options);
    let loads = 0;
    const load = async () => ++loads;
    expect(cache.enabled).toBe(false);
    expect(await Promise.all([cache.fetch('p', 'k', load), cache.fetch('p', 'k', load)])).toEqual([1, 2]);
    expect(cache.set('p', 'k', 9)).toBe(false);
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0, scopes: 0 });
  });
});

// ---------------------------------------------------------------------------------------------
// Property: the cache behaves like a plain reference model (an array in LRU order, a generation
// counter per scope that is never pruned, an epoch) under any sequence of fetches, settlements,
// invalidations, flushes, clock ticks and growths.

interface Value {
  id: number;
  size: number;
  keep: boolean;
}

type Op =
  | { type: 'fetch'; scope: string; key: string; size: number; keep: boolean }
  | { type: 'resolve' | 'reject'; pick: number }
  | { type: 'invalidate'; scope: string }
  | { type: 'flush' }
  | { type: 'tick'; ms: number }
  | { type: 'grow'; pick: number; by: number };

interface ModelEntry {
  fullKey: string;
  scope: string;
  value: Value;
  size: number;
  start: number;
}

interface ModelLoad {
  id: number;
  scope: string;
  fullKey: string;
  generation: number;
  epoch: number;
  value: Value;
}

class ReferenceModel {
  entries: ModelEntry[] = []; // least recently used first
  joinable = new Map<string, ModelLoad>();
  generations = new Map<string, number>();
  epoch = 0;
  nextId = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    private readonly ttlMs: number,
  ) {}

  cost(fullKey: string, value: Value): number {
    return ENTRY_OVERHEAD_BYTES + Buffer.byteLength(fullKey) + value.size;
  }

  private find(fullKey: string): number {
    return this.entries.findIndex((entry) => entry.fullKey === fullKey);
  }

  private fresh(entry: ModelEntry, now: number): boolean {
    return now - entry.start <= this.ttlMs;
  }

  /** Returns the outcome and the id of the value the fetch will answer with. */
  fetch(scope: string, key: string, size: number, keep: boolean, now: number): { outcome: LookupOutcome; id: number; load?: ModelLoad } {
    const fullKey = `${scope}\u0000${key}`;
    const index = this.find(fullKey);
    if (index >= 0) {
      const [entry] = this.entries.splice(index, 1);
      if (this.fresh(entry, now)) {
        this.entries.push(entry);
        return { outcome: 'hit', id: entry.value.id };
      }
    }
    const joined = this.joinable.get(fullKey);
    if (joined) return { outcome: 'shared', id: joined.id };
    const id = this.nextId++;
    const load = { id, scope, fullKey, generation: this.generations.get(scope) ?? 0, epoch: this.epoch, value: { id, size, keep } };
    this.joinable.set(fullKey, load);
    return { outcome: 'miss', id, load };
  }

  settle(load: ModelLoad, ok: boolean, now: number): void {
    if (this.joinable.get(load.fullKey) === load) this.joinable.delete(load.fullKey);
    const current = load.generation === (this.generations.get(load.scope) ?? 0) && load.epoch === this.epoch;
    if (ok && current && load.value.keep) this.store(load.fullKey, load.scope, load.value, now, now);
  }

  store(fullKey: string, scope: string, value: Value, start: number, _now: number): void {
    const index = this.find(fullKey);
    if (index >= 0) this.entries.splice(index, 1);
    const size = this.cost(fullKey, value);
    if (size > this.maxBytes) return;
    if (this.entries.length >= this.maxEntries) this.entries.shift();
    while (this.bytes() + size > this.maxBytes) this.entries.shift();
    this.entries.push({ fullKey, scope, value, size, start });
  }

  grow(fullKey: string, value: Value, now: number): void {
    const entry = this.entries[this.find(fullKey)];
    if (!entry || entry.value !== value || !this.fresh(entry, now)) return;
    this.store(fullKey, entry.scope, value, entry.start, now);
  }

  invalidate(scope: string): void {
    this.generations.set(scope, (this.generations.get(scope) ?? 0) + 1);
    for (const [fullKey, load] of this.joinable) if (load.scope === scope) this.joinable.delete(fullKey);
    this.entries = this.entries.filter((entry) => entry.scope !== scope);
  }

  flush(): void {
    this.epoch += 1;
    this.joinable.clear();
    this.entries = [];
  }

  bytes(): number {
    return this.entries.reduce((sum, entry) => sum + entry.size, 0);
  }

  stats() {
    return { entries: this.entries.length, bytes: this.bytes(), scopes: new Set(this.entries.map((entry) => entry.scope)).size };
  }
}

const scope = fc.constantFrom('p1', 'p2', 'p3');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ type: fc.constant('fetch' as const), scope, key: fc.constantFrom('a', 'b', 'c', 'd'), size: fc.nat(120), keep: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)) }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('resolve' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('reject' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('invalidate' as const), scope }) },
  { weight: 1, arbitrary: fc.constant({ type: 'flush' as const }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 200 }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('grow' as const), pick: fc.nat(), by: fc.integer({ min: 1, max: 80 }) }) },
);

describe('ScopedCache against a reference model', () => {
  it('agrees on every answer, lookup outcome, entry count, byte count and scope count', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 140, max: 900 }),
        fc.integer({ min: 1, max: 400 }),
        fc.array(op, { minLength: 1, maxLength: 60 }),
        async (maxEntries, maxBytes, ttlMs, ops) => {
          const clock = fakeClock();
          const outcomes: LookupOutcome[] = [];
          const cache = new ScopedCache<Value>({ maxEntries, maxBytes, ttlMs, now: clock.now, sizeOf: (value) => value.size, onLookup: (o) => outcomes.push(o) });
          const model = new ReferenceModel(maxEntries, maxBytes, ttlMs);
          const expectedOutcomes: LookupOutcome[] = [];
          const pending: { load: ModelLoad; gate: ReturnType<typeof gate<Value>> }[] = [];
          const settledLoads = new Map<number, boolean>(); // id → succeeded
          const resolved: { load: ModelLoad }[] = [];
          const answers: { expectedId: number; answer: Promise<number | 'failed'> }[] = [];

          const settle = async (pick: number, ok: boolean) => {
            if (pending.length === 0) return;
            const [{ load, gate: g }] = pending.splice(pick % pending.length, 1);
            if (ok) g.resolve(load.value);
            else g.reject(new Error(`load ${load.id} failed`));
            await settled();
            model.settle(load, ok, clock.now());
            settledLoads.set(load.id, ok);
            if (ok) resolved.push({ load });
          };

          for (const step of ops) {
            switch (step.type) {
              case 'fetch': {
                const predicted = model.fetch(step.scope, step.key, step.size, step.keep, clock.now());
                expectedOutcomes.push(predicted.outcome);
                const g = gate<Value>();
                const answer = cache.fetch(step.scope, step.key, g.load, { keep: (value) => value.keep });
                if (predicted.load) pending.push({ load: predicted.load, gate: g });
                answers.push({ expectedId: predicted.id, answer: answer.then((value) => value.id, () => 'failed' as const) });
                break;
              }
              case 'resolve':
              case 'reject':
                await settle(step.pick, step.type === 'resolve');
                break;
              case 'invalidate':
                cache.invalidate(step.scope);
                model.invalidate(step.scope);
                break;
              case 'flush':
                cache.flush();
                model.flush();
                break;
              case 'tick':
                clock.advance(step.ms);
                break;
              case 'grow': {
                if (resolved.length === 0) break;
                const { load } = resolved[step.pick % resolved.length];
                load.value.size += step.by;
                const key = load.fullKey.slice(load.scope.length + 1);
                cache.remeasure(load.scope, key, load.value);
                model.grow(load.fullKey, load.value, clock.now());
                break;
              }
            }
            expect(cache.stats()).toEqual(model.stats());
            expect(cache.stats().bytes).toBeLessThanOrEqual(maxBytes);
            expect(cache.stats().entries).toBeLessThanOrEqual(maxEntries);
          }
          while (pending.length > 0) await settle(0, true);
          expect(cache.stats()).toEqual(model.stats());
          expect(outcomes).toEqual(expectedOutcomes);
          for (const { expectedId, answer } of answers) {
            expect(await answer).toBe(settledLoads.get(expectedId) === false ? 'failed' : expectedId);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
