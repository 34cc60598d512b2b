import { COUNTER_NAMES, addCounters, isZero, zeroCounters, type Counters } from '../rules/counting.js';

export type Grain = 'minute' | 'hour' | 'day';
export const GRAINS: readonly Grain[] = ['minute', 'hour', 'day'];

const GRAIN_MS: Record<Grain, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

export function bucketStart(instantMs: number, grain: Grain): number {
  return Math.floor(instantMs / GRAIN_MS[grain]) * GRAIN_MS[grain];
}

export interface RollupRow {
  agentId: string;
  traffic: string;
  bucketMs: number;
  counters: Counters;
}

/**
 * Accumulates counter deltas of a batch per (agent, traffic, bucket) for each grain, so that
 * each rollup row is written once per batch, in one sorted order shared by every replica.
 */
export class RollupDeltas {
  private readonly rows: Record<Grain, Map<string, RollupRow>> = { minute: new Map(), hour: new Map(), day: new Map() };

  add(agentId: string, traffic: string, instantMs: number, delta: Counters): void {
    if (isZero(delta)) return;
    for (const grain of GRAINS) {
      const bucketMs = bucketStart(instantMs, grain);
      const key = `${agentId}\u0000${traffic}\u0000${bucketMs}`;
      let row = this.rows[grain].get(key);
      if (!row) {
        row = { agentId, traffic, bucketMs, counters: zeroCounters() };
        this.rows[grain].set(key, row);
      }
      addCounters(row.counters, delta);
    }
  }

  /** Non-zero rows of a grain sorted by (agent, traffic, bucket): the lock order. */
  sorted(grain: Grain): RollupRow[] {
    return [...this.rows[grain].values()]
      .filter((row) => !isZero(row.counters))
      .sort((a, b) =>
        a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : a.traffic < b.traffic ? -1 : a.traffic > b.traffic ? 1 : a.bucketMs - b.bucketMs,
      );
  }

  /** Column arrays for an unnest upsert. */
  static columns(rows: RollupRow[]): unknown[] {
    return [
      rows.map((r) => r.agentId),
      rows.map((r) => r.traffic),
      arrayLiteral(rows.map((r) => new Date(r.bucketMs).toISOString())),
      ...COUNTER_NAMES.map((name) => arrayLiteral(rows.map((r) => r.counters[name]))),
    ];
  }
}

/**
 * A PostgreSQL array literal for values that need no quoting (numbers, booleans, ISO
 * timestamps, null), cast by the query (`$1::bigint[]`). Cheaper than the driver's generic
 * per-element escaping on the ingest hot path; text ids still go through the driver.
 */
export function arrayLiteral(values: readonly (number | boolean | string | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : v === true ? 't' : v === false ? 'f' : v)).join(',')}}`;
}
