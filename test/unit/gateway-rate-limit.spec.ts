import 'reflect-metadata';
import fc from 'fast-check';
import { loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { ProblemException } from '../../apps/gateway/src/http/problem.js';
import { AuthFailures } from '../../apps/gateway/src/rate-limit/auth-failures.js';
import { clientAddressKey } from '../../apps/gateway/src/rate-limit/client-address.js';
import { LeaseBook, type LeaseAnswer, type LeaseStore } from '../../apps/gateway/src/rate-limit/lease-book.js';
import { configProblems } from '../support/service-envs.js';

/**
 * The rate limiter's pure parts: how a client address is counted (IPv6 by a prefix), the
 * leases of principals' tokens against a model of the shared buckets, and the throttling of
 * failed authentications per address.
 */

/** A 128-bit address as the eight hextets of its full form. */
const hextets = (value: bigint) => Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
/** The same address written with the longest run of zero hextets compressed (`::`), as clients may send it. */
function compressed(value: bigint): string {
  const parts = hextets(value);
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && parts[j] === '0') j++;
    if (j - i > best.length) best = { start: i, length: j - i };
  }
  if (best.length < 2) return parts.join(':');
  return `${parts.slice(0, best.start).join(':')}::${parts.slice(best.start + best.length).join(':')}`;
}
/** The reference: the address's first `prefix` bits. */
const network = (value: bigint, prefix: number) => value >> BigInt(128 - prefix);

const address128 = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
// Not the IPv4-mapped range ::ffff:0:0/96, which is counted as IPv4.
const ipv6 = address128.filter((value) => value >> 32n !== 0xffffn);
const prefix = fc.integer({ min: 32, max: 128 });

describe('clientAddressKey', () => {
  it('puts two IPv6 addresses in one bucket exactly when their first `prefix` bits are equal, however they are written', () => {
    fc.assert(
      fc.property(ipv6, prefix, fc.integer({ min: 0, max: 127 }), fc.boolean(), (a, bits, flipped, shortForm) => {
        const b = a ^ (1n << BigInt(127 - flipped));
        fc.pre(b >> 32n !== 0xffffn);
        const write = (value: bigint) => (shortForm ? compressed(value) : hextets(value).join(':'));
        const same = clientAddressKey(write(a), bits) === clientAddressKey(write(b), bits);
        expect(same).toBe(network(a, bits) === network(b, bits));
        // Full and compressed forms of one address are one client.
        expect(clientAddressKey(compressed(a), bits)).toBe(clientAddressKey(hextets(a).join(':'), bits));
      }),
      { numRuns: 300 },
    );
  });

  it('names the IPv6 network in its canonical form with the prefix', () => {
    expect(clientAddressKey('2001:db8:a:b:1:2:3:4', 64)).toBe('2001:db8:a:b::/64');
    expect(clientAddressKey('2001:DB8:A:B:FFFF:FFFF:FFFF:FFFF', 64)).toBe('2001:db8:a:b::/64');
    expect(clientAddressKey('2001:db8:a:b:1:2:3:4', 48)).toBe('2001:db8:a::/48');
    expect(clientAddressKey('2001:db8:a:b:1:2:3:4', 128)).toBe('2001:db8:a:b:1:2:3:4/128');
    expect(clientAddressKey('2001:db8:a:ffff:1:2:3:4', 57)).toBe('2001:db8:a:ff80::/57');
    expect(clientAddressKey('2001:db8:a:ffff:1:2:3:4', 56)).toBe('2001:db8:a:ff00::/56');
    expect(clientAddressKey('fe80::1%eth0', 64)).toBe('fe80::/64');
  });

  it('counts IPv4 addresses one by one, an IPv4-mapped IPv6 address as its IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), prefix, (ip, bits) => {
        expect(clientAddressKey(ip, bits)).toBe(ip);
        expect(clientAddressKey(`::ffff:${ip}`, bits)).toBe(ip);
        const [a, b, c, d] = ip.split('.').map(Number);
        const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
        expect(clientAddressKey(`::ffff:${hex(a, b)}:${hex(c, d)}`, bits)).toBe(ip);
      }),
    );
  });

  it('hashes anything that is not an address into a short key of base64url characters', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (value) => {
        fc.pre(/[^0-9A-Za-z:.%]/.test(value) || value === '');
        const key = clientAddressKey(value, 64);
        expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
      }),
    );
    for (const odd of ['unknown', '127.1', '0x7f.0.0.1', '1.2.3.4.5', '2001:db8::1::2']) expect(clientAddressKey(odd, 64)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('is set by RATE_LIMIT_IPV6_PREFIX: /64 by default, 32 to 128', () => {
    expect(loadEnv(GatewayEnv, {}).RATE_LIMIT_IPV6_PREFIX).toBe(64);
    expect(loadEnv(GatewayEnv, { RATE_LIMIT_IPV6_PREFIX: '48' }).RATE_LIMIT_IPV6_PREFIX).toBe(48);
    expect(loadEnv(GatewayEnv, { RATE_LIMIT_IPV6_PREFIX: '128' }).RATE_LIMIT_IPV6_PREFIX).toBe(128);
    for (const bad of ['31', '129', '64.5', 'sixty-four']) {
      const found = configProblems(GatewayEnv, { RATE_LIMIT_IPV6_PREFIX: bad });
      expect(found.length).toBeGreaterThan(0);
      expect(found.every((problem) => problem.startsWith('RATE_LIMIT_IPV6_PREFIX: '))).toBe(true);
    }
  });
});

/** A model of the shared buckets: `limit` tokens a minute each, refilled evenly; answers after a tick (requests overlap). */
class ModelStore implements LeaseStore {
  readonly taken = new Map<string, number>();
  readonly givenBack = new Map<string, number>();
  private readonly tokens = new Map<string, { available: number; at: number }>();
  private inFlight = 0;
  maxInFlight = 0;

  constructor(private readonly clock: { now: number }) {}

  async take(key: string, limit: number, wanted: number): Promise<LeaseAnswer | undefined> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight--;
    const bucket = this.bucket(key, limit);
    if (bucket.available < 1) return { allowed: false, retryMs: 60_000 / limit, resetMs: 60_000 };
    const granted = Math.min(wanted, Math.floor(bucket.available));
    bucket.available -= granted;
    this.taken.set(key, (this.taken.get(key) ?? 0) + granted);
    return { allowed: true, granted, remaining: Math.floor(bucket.available), resetMs: 60_000 };
  }

  giveBack(key: string, limit: number, tokens: number): void {
    const bucket = this.bucket(key, limit);
    bucket.available = Math.min(limit, bucket.available + tokens);
    this.givenBack.set(key, (this.givenBack.get(key) ?? 0) + tokens);
  }

  private bucket(key: string, limit: number) {
    const bucket = this.tokens.get(key) ?? { available: limit, at: this.clock.now };
    bucket.available = Math.min(limit, bucket.available + ((this.clock.now - bucket.at) * limit) / 60_000);
    bucket.at = this.clock.now;
    this.tokens.set(key, bucket);
    return bucket;
  }
}

type Step = { type: 'requests'; key: string; count: number } | { type: 'tick'; ms: number } | { type: 'sweep' };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('requests' as const), key: fc.constantFrom('a', 'b'), count: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 1500 }) }) },
  { weight: 1, arbitrary: fc.constant({ type: 'sweep' as const }) },
);

describe('LeaseBook', () => {
  it('admits exactly the tokens it took and did not give back, with one acquisition per principal at a time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 8 }), fc.array(step, { maxLength: 40 }), async (limit, fraction, steps) => {
        const clock = { now: 0 };
        const store = new ModelStore(clock);
        const book = new LeaseBook(store, { fraction, leaseMs: 1000, maxLeases: 10, now: () => clock.now });
        const admitted = new Map<string, number>();
        for (const s of steps) {
          if (s.type === 'tick') clock.now += s.ms;
          else if (s.type === 'sweep') book.sweep();
          else {
            // `count` requests of one principal at once: they share the acquisition in flight.
            const answers = await Promise.all(Array.from({ length: s.count }, () => book.admit(s.key, limit)));
            const allowed = answers.filter((answer) => answer?.allowed).length;
            admitted.set(s.key, (admitted.get(s.key) ?? 0) + allowed);
            for (const answer of answers) if (answer?.allowed) expect(answer.remaining).toBeGreaterThanOrEqual(0);
          }
        }
        book.close();
        for (const key of ['a', 'b']) expect(admitted.get(key) ?? 0).toBe((store.taken.get(key) ?? 0) - (store.givenBack.get(key) ?? 0));
        // Two principals may each have one acquisition in flight; never more.
        expect(store.maxInFlight).toBeLessThanOrEqual(2);
      }),
      { numRuns: 200 },
    );
  });

  it('serves the requests of a lease without asking the store again, for at most leaseMs', async () => {
    const clock = { now: 0 };
    const store = new ModelStore(clock);
    const book = new LeaseBook(store, { fraction: 10, leaseMs: 1000, maxLeases: 10, now: () => clock.now });
    const remaining: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await book.admit('k', 100);
      remaining.push(answer?.allowed ? answer.remaining : undefined);
    }
    // One lease of 100 / 10 tokens: the store was asked once, and what it said was left counts down with the lease.
    expect(store.taken.get('k')).toBe(10);
    expect(remaining).toEqual([99, 98, 97, 96, 95]);
    clock.now += 1000; // expired: its 5 unused tokens go back before the next lease is taken
    expect(await book.admit('k', 100)).toMatchObject({ allowed: true });
    expect(store.givenBack.get('k')).toBe(5);
    expect(store.taken.get('k')).toBe(20);
  });
});

describe('AuthFailures', () => {
  const unauthorized = () => new ProblemException('invalid-api-key', 'The API key is invalid or has been revoked.');

  it('counts 401s only; once the address is blocked, answers its failures 429 without the store, and queues its lookups one at a time', async () => {
    const clock = { now: 0 };
    const calls: string[] = [];
    let blockedMs = 0;
    const failures = new AuthFailures(
      {
        failure: async (key) => {
          calls.push(key);
          return { counted: blockedMs === 0, blockedMs };
        },
      },
      3,
      64,
      () => clock.now,
    );
    const address = '2001:db8:1:2::7';
    expect(failures.gate(address)).toBeUndefined();
    // A 403 or 503 is not a failed authentication.
    const forbidden = new ProblemException('account-unavailable', 'The platform account is unavailable; contact support.');
    expect(await failures.afterFailure(forbidden, address)).toBe(forbidden);
    expect(calls).toEqual([]);
    const first = unauthorized();
    expect(await failures.afterFailure(first, address)).toBe(first);
    expect(calls).toEqual(['2001:db8:1:2::/64']);

    // Another replica filled the bucket: the next failure learns it, and is answered 429.
    blockedMs = 5000;
    const refused = await failures.afterFailure(unauthorized(), '2001:db8:1:2::8');
    expect(refused).toBeInstanceOf(ProblemException);
    expect((refused as ProblemException).getStatus()).toBe(429);
    expect((refused as ProblemException).headers['Retry-After']).toBe('5');
    // Known blocked now: no store call for the next failure of the /64.
    expect(((await failures.afterFailure(unauthorized(), '2001:db8:1:2::9')) as ProblemException).getStatus()).toBe(429);
    expect(calls).toHaveLength(2);

    const gate = failures.gate('2001:db8:1:2:ffff::1');
    expect(gate).toBeDefined();
    expect(failures.gate('2001:db8:1:3::1')).toBeUndefined();
    let running = 0;
    let most = 0;
    const lookup = (fails: boolean) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
      if (fails) throw new Error('database down');
      return 'found';
    };
    const results = await Promise.allSettled([gate!(lookup(false)), gate!(lookup(true)), gate!(lookup(false))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(most).toBe(1);

    // The block ends: no gate, and failures are counted again.
    clock.now += 5000;
    blockedMs = 0;
    expect(failures.gate(address)).toBeUndefined();
    const later = unauthorized();
    expect(await failures.afterFailure(later, address)).toBe(later);
    expect(calls).toHaveLength(3);
  });
});
