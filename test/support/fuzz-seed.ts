import { randomInt } from 'node:crypto';

/**
 * The seed of a fuzz spec's fast-check runs: a new one every run, so the runs explore new
 * inputs over time, or FUZZ_SEED to replay one. Printed at start (stderr, outside Jest's console
 * capture) with the command that replays it, so a failure on CI can be reproduced even when the
 * log of the failing property was cut.
 */
export function fuzzSeed(spec: string): number {
  const given = process.env.FUZZ_SEED;
  const seed = given === undefined || given === '' ? randomInt(0, 2 ** 31 - 1) : Number(given);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not "${given}"`);
  process.stderr.write(`[${spec}] fast-check seed ${seed}; replay: FUZZ_SEED=${seed} npm run test:integration -- --testPathPatterns ${spec}\n`);
  return seed;
}
