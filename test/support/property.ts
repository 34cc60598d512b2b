import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { initializeDatabase } from '#libs/database';
import type { InboundMessage } from '#libs/nats';
import { newTestDatabase, type TestDatabase } from './servers.js';

/**
 * The property runs of the specs: fast-check's asyncProperty over the arbitraries, `runs` times
 * (PROPERTY_RUNS overrides it). With a `seed` (a fuzz spec's fuzzSeed, printed with the command
 * that replays it), the runs follow it and end at the first failure.
 */
export async function checkProperty<Ts extends [unknown, ...unknown[]]>(
  arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  predicate: (...values: Ts) => Promise<void>,
  options: { runs: number; seed?: number },
): Promise<void> {
  const runs = process.env.PROPERTY_RUNS ? Number(process.env.PROPERTY_RUNS) : options.runs;
  const seeded = options.seed === undefined ? {} : { seed: options.seed, endOnFailure: true };
  await fc.assert(fc.asyncProperty(...arbitraries, predicate), { numRuns: runs, ...seeded });
}

/**
 * How a JetStream consumer may hand messages to a projection, from a seed: shuffled, about a
 * third delivered twice (the second time with deliveries 2), in batches of 1 to 6, and two whole
 * batches redelivered at the end, as after an ack that never reached the server.
 */
export function deliveryPlan(messages: InboundMessage[], seed: number): InboundMessage[][] {
  let state = seed >>> 0 || 1;
  const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const arrival = [...messages];
  for (let i = arrival.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [arrival[i], arrival[j]] = [arrival[j], arrival[i]];
  }
  for (const message of messages) if (random() < 0.3) arrival.splice(Math.floor(random() * arrival.length), 0, { ...message, deliveries: 2 });
  const batches: InboundMessage[][] = [];
  for (let i = 0; i < arrival.length; ) {
    const size = 1 + Math.floor(random() * 6);
    batches.push(arrival.slice(i, i + size));
    i += size;
  }
  for (let i = 0; i < 2 && batches.length > 0; i++) batches.push(batches[Math.floor(random() * batches.length)]);
  return batches;
}

/**
 * In a spec file or describe block: a fresh database with one service's schema migrated (no
 * NATS), for tests that drive a repository or projection directly. Dropped after the tests.
 */
export function useMigratedDatabase<D extends DataSource>(create: (url: string) => D): { readonly db: TestDatabase; readonly dataSource: D } {
  const state = {} as { db: TestDatabase; dataSource: D };
  beforeAll(async () => {
    state.db = newTestDatabase();
    state.dataSource = create(state.db.url);
    await initializeDatabase(state.dataSource);
  });
  afterAll(async () => {
    await state.dataSource?.destroy();
    await state.db?.drop();
  });
  return state;
}
