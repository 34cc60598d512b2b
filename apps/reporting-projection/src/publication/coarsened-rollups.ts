import type { EntityManager } from 'typeorm';
import { COUNTER_NAMES, zeroCounters, type Counters } from '../rules/counting.js';
import { MINUTE_MS } from '../rules/periods.js';
import type { PeriodBuckets } from '../rules/rollup-ranges.js';

export const QUARTER_MS = 15 * MINUTE_MS;
/** A part-quarter of at most this many minutes is read from the state itself, a longer one as its quarter less the rest. */
const DIRECT_MAX_MS = 7 * MINUTE_MS;

const floorQuarter = (ms: number) => Math.floor(ms / QUARTER_MS) * QUARTER_MS;

/** A minute range [from, to) (ms) summed from the per-recommendation state, added (+1) or taken away (-1). */
export interface StateSegment {
  from: number;
  to: number;
  sign: 1 | -1;
}

/** How the coarsened part of a minute range is answered: whole quarter rows, and state for the part-quarters. */
export interface CoarsenedParts {
  quarters: { from: number; to: number }[];
  state: StateSegment[];
}

/**
 * The buckets of `rollup_minute` start at the bound `rollup_minute_window.minute_from` (ms;
 * -Infinity before anything was coarsened), those of `rollup_quarter` end before it. Read in the
 * caller's snapshot, so it agrees with the rows the caller reads.
 */
export async function minuteRollupsFrom(manager: EntityManager): Promise<number> {
  const rows: { from_ms: string }[] = await manager.query(
    `SELECT extract(epoch FROM minute_from) * 1000 AS from_ms FROM reporting.rollup_minute_window`,
  );
  return rows.length === 0 ? Number.NEGATIVE_INFINITY : Number(rows[0].from_ms);
}

/**
 * The part of the minute range [from, to) before the bound, where only quarter rows are kept.
 * Whole quarters inside it are quarter rows; a quarter it covers only in part (an edge that is not
 * on a quarter-hour: the rolling windows start 24 h × n before a cutoff of any minute) is the
 * state of the minutes inside it when they are at most 7, otherwise its quarter row less the
 * state of the minutes outside. The state of those minutes is kept (REPORTING_RESTATEMENT_DAYS
 * ≥ STATE_EDGE_DAYS, or else minutes are kept that long). The part at or after the bound is
 * read from rollup_minute as before.
 */
export function coarsenedParts(from: number, to: number, bound: number): CoarsenedParts {
  const parts: CoarsenedParts = { quarters: [], state: [] };
  const lo = from;
  const hi = Math.min(to, bound);
  if (!(lo < hi)) return parts;
  const segment = (a: number, b: number, sign: 1 | -1) => {
    if (a < b) parts.state.push({ from: a, to: b, sign });
  };
  const first = floorQuarter(lo);
  if (first === floorQuarter(hi - 1)) {
    // Within one quarter.
    if (lo === first && hi === first + QUARTER_MS) parts.quarters.push({ from: first, to: hi });
    else if (hi - lo <= DIRECT_MAX_MS) segment(lo, hi, 1);
    else {
      parts.quarters.push({ from: first, to: first + QUARTER_MS });
      segment(first, lo, -1);
      segment(hi, first + QUARTER_MS, -1);
    }
    return parts;
  }
  let quartersFrom = lo;
  if (lo !== first) {
    if (first + QUARTER_MS - lo <= DIRECT_MAX_MS) {
      segment(lo, first + QUARTER_MS, 1);
      quartersFrom = first + QUARTER_MS;
    } else {
      segment(first, lo, -1);
      quartersFrom = first;
    }
  }
  let quartersTo = hi;
  const last = floorQuarter(hi);
  if (hi !== last) {
    if (hi - last <= DIRECT_MAX_MS) {
      segment(last, hi, 1);
      quartersTo = last;
    } else {
      segment(hi, last + QUARTER_MS, -1);
      quartersTo = last + QUARTER_MS;
    }
  }
  if (quartersFrom < quartersTo) parts.quarters.push({ from: quartersFrom, to: quartersTo });
  return parts;
}

/**
 * What the minute rollups of each segment held, recomputed from the state: a recommendation
 * counts in the minute it was created (rules/counting.ts contributionOf), an entry still
 * unattributed in the minute it was recorded. One statement per distinct segment, so each reads
 * a few minutes of one weekly partition (BRIN on created_at / recorded_at). Resolves to the sums
 * per segment (same order), keyed by `${agent_id}\0${traffic}`.
 */
export async function sumState(
  segments: readonly { from: number; to: number }[],
  scopes: readonly { agentId: string; traffic: string }[],
  manager: EntityManager,
): Promise<Map<string, Counters>[]> {
  const cache = new Map<string, Map<string, Counters>>();
  const results: Map<string, Counters>[] = [];
  for (const { from, to } of segments) {
    const key = `${from}:${to}`;
    let sums = cache.get(key);
    if (!sums) {
      sums = new Map();
      const rows: Record<string, string>[] = await manager.query(
        `WITH s AS (SELECT * FROM unnest($1::text[], $2::text[]) AS s(agent_id, traffic))
         SELECT r.agent_id, r.traffic,
                count(*) FILTER (WHERE r.level >= 1) AS exposures,
                count(*) FILTER (WHERE r.level >= 2) AS clicks,
                count(*) FILTER (WHERE r.level = 3) AS engagements,
                count(*) FILTER (WHERE r.level = 4) AS conversions,
                coalesce(sum(r.attributed_usd_micros) FILTER (WHERE r.level >= 0 AND r.foreign_currency_entries = 0), 0) AS earnings_micros,
                count(*) FILTER (WHERE r.level >= 0 AND r.foreign_currency_entries > 0) AS earnings_excluded_recommendations,
                count(*) FILTER (WHERE r.level >= 0 AND r.billable AND r.attributed_entries = 0) AS pending_earnings_recommendations,
                0 AS accounting_review_required
           FROM reporting.recommendation r JOIN s ON r.agent_id = s.agent_id AND r.traffic = s.traffic
          WHERE r.created_at >= $3::timestamptz AND r.created_at < $4::timestamptz
          GROUP BY r.agent_id, r.traffic
         UNION ALL
         SELECT e.agent_id, e.traffic, 0, 0, 0, 0, 0, 0, 0, count(*)
           FROM reporting.accounting_entry e JOIN s ON e.agent_id = s.agent_id AND e.traffic = s.traffic
          WHERE NOT e.attributed AND e.recorded_at >= $3::timestamptz AND e.recorded_at < $4::timestamptz
          GROUP BY e.agent_id, e.traffic`,
        [scopes.map((s) => s.agentId), scopes.map((s) => s.traffic), new Date(from).toISOString(), new Date(to).toISOString()],
      );
      for (const row of rows) {
        const scope = `${row.agent_id}\u0000${row.traffic}`;
        const counters = sums.get(scope) ?? zeroCounters();
        for (const name of COUNTER_NAMES) counters[name] += Number(row[name]);
        sums.set(scope, counters);
      }
      cache.set(key, sums);
    }
    results.push(sums);
  }
  return results;
}

/**
 * Adds the state's sums of each segment (sumState), times the segment's sign, to the figures
 * `names` of `target(segment, scope key)` (a period's or a bucket's; undefined: not summed).
 */
export async function addStateSums<S extends StateSegment, Name extends keyof Counters>(
  segments: readonly S[],
  scopes: readonly { agentId: string; traffic: string }[],
  manager: EntityManager,
  names: readonly Name[],
  target: (segment: S, key: string) => Record<Name, number> | undefined,
): Promise<void> {
  if (segments.length === 0) return;
  const sums = await sumState(segments, scopes, manager);
  segments.forEach((segment, i) => {
    for (const [key, counters] of sums[i]) {
      const figures = target(segment, key);
      if (figures) for (const name of names) figures[name] += segment.sign * counters[name];
    }
  });
}

/**
 * Every rollup range a decomposed period is read from, in order: its days, its hours, and each
 * minute range followed by the quarter-hours of its part before `bound` (coarsenedParts).
 */
export function forEachRollupRange(parts: PeriodBuckets, bound: number, add: (grain: 'day' | 'hour' | 'quarter' | 'minute', from: Date | null, to: Date) => void): void {
  for (const range of parts.days) add('day', range.from, range.to);
  for (const range of parts.hours) add('hour', range.from, range.to);
  for (const range of parts.minutes) {
    add('minute', range.from, range.to);
    for (const quarters of coarsenedParts(range.from!.getTime(), range.to.getTime(), bound).quarters) {
      add('quarter', new Date(quarters.from), new Date(quarters.to));
    }
  }
}
