import { addCounters, isZero, zeroCounters, type Counters } from '../rules/counting.js';

export type Grain = 'minute' | 'hour' | 'day';

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

const byKey = (a: RollupRow, b: RollupRow) =>
  a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : a.traffic < b.traffic ? -1 : a.traffic > b.traffic ? 1 : a.bucketMs - b.bucketMs;

/**
 * Accumulates counter deltas of a batch per (agent, traffic, minute), so that each rollup row is
 * written once per batch, in one sorted order shared by every replica. The hour and day deltas
 * are the sums of the minute ones: the writing statement adds them up (ROLLUPS_UPSERT), and
 * `sorted` does here for the tests and the reference model.
 */
export class RollupDeltas {
  private readonly minutes = new Map<string, RollupRow>();

  add(agentId: string, traffic: string, instantMs: number, delta: Counters): void {
    if (isZero(delta)) return;
    const bucketMs = bucketStart(instantMs, 'minute');
    const key = `${agentId}\u0000${traffic}\u0000${bucketMs}`;
    let row = this.minutes.get(key);
    if (!row) {
      row = { agentId, traffic, bucketMs, counters: zeroCounters() };
      this.minutes.set(key, row);
    }
    addCounters(row.counters, delta);
  }

  /** Non-zero rows of a grain sorted by (agent, traffic, bucket): the lock order. */
  sorted(grain: Grain): RollupRow[] {
    let rows = [...this.minutes.values()];
    if (grain !== 'minute') {
      const coarse = new Map<string, RollupRow>();
      for (const minute of rows) {
        const bucketMs = bucketStart(minute.bucketMs, grain);
        const key = `${minute.agentId}\u0000${minute.traffic}\u0000${bucketMs}`;
        let row = coarse.get(key);
        if (!row) {
          row = { agentId: minute.agentId, traffic: minute.traffic, bucketMs, counters: zeroCounters() };
          coarse.set(key, row);
        }
        addCounters(row.counters, minute.counters);
      }
      rows = [...coarse.values()];
    }
    return rows.filter((row) => !isZero(row.counters)).sort(byKey);
  }
}

