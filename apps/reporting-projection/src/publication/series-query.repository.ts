import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SERIES_FIGURES, type SeriesFigures } from '#libs/contracts';
import { counter } from '#libs/observability';
import { decomposePeriod } from '../rules/rollup-ranges.js';
import type { SeriesBucketBounds } from '../rules/series-buckets.js';
import { scopeKey, type ScopeKey } from './rollup-query.repository.js';
import { addStateSums, coarsenedParts, forEachRollupRange, minuteRollupsFrom, type StateSegment } from './coarsened-rollups.js';

type Grain = 'day' | 'hour' | 'quarter' | 'minute';
const GRAINS: readonly Grain[] = ['day', 'hour', 'quarter', 'minute'];

const rollupRowsRead = counter('weave_series_rollup_rows_total', 'Rollup rows summed into report series buckets, by table', ['grain']);

export const zeroFigures = (): SeriesFigures => ({ exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 });

/** One set-based read's input: the UTC rollup ranges of each bucket at one grain. */
export interface SeriesScan {
  grain: Grain;
  sql: string;
  parameters: unknown[];
}

const NONZERO = SERIES_FIGURES.map((name) => `r.${name} <> 0`).join(' OR ');

/**
 * Sums the rollups into the buckets of many series at once. Each bucket is decomposed into the
 * fewest UTC rollup rows (decomposePeriod: whole UTC days only where the bucket covers them,
 * whole hours where it covers them, minutes at the edges), so a 90-day daily series in
 * Asia/Kathmandu, whose local days never cover a whole UTC day, reads 23 hour rows and 60
 * minute rows a day rather than 1,440 minutes. The ranges of every bucket, and the scopes that
 * share these buckets, go to PostgreSQL as arrays: one statement per rollup table, each range an
 * index range scan of the table's primary key (a range may come back as several rows of one
 * bucket: the minutes at both ends of a day are two ranges). Minutes before the minute window's
 * bound are read as quarter-hours, and a part-quarter from the state, as the reports do
 * (RollupQueryRepository, coarsened-rollups.ts).
 */
// Raw SQL (publication hot path): ranges × scopes joined to the rollup tables through unnest arrays.
@Injectable()
export class SeriesQueryRepository {
  /** Sums per scope and bucket (index into `buckets`), and how many rollup rows were read. */
  async sumBuckets(buckets: SeriesBucketBounds[], scopes: ScopeKey[], manager: EntityManager): Promise<{ sums: Map<string, SeriesFigures[]>; rowsRead: number }> {
    const sums = new Map<string, SeriesFigures[]>();
    for (const scope of scopes) sums.set(scopeKey(scope.agentId, scope.traffic), buckets.map(zeroFigures));
    let rowsRead = 0;
    if (scopes.length === 0 || buckets.length === 0) return { sums, rowsRead };
    const bound = await minuteRollupsFrom(manager);
    await addStateSums(SeriesQueryRepository.stateSegments(buckets, bound), scopes, manager, SERIES_FIGURES, (segment, key) => sums.get(key)?.[segment.bucket]);
    for (const scan of SeriesQueryRepository.buildScans(buckets, scopes, bound)) {
      const rows: Record<string, string>[] = await manager.query(scan.sql, scan.parameters);
      let read = 0;
      for (const row of rows) {
        const figures = sums.get(scopeKey(row.agent_id, row.traffic))![Number(row.bucket_index)];
        for (const name of SERIES_FIGURES) figures[name] += Number(row[name]);
        read += Number(row.rows_read);
      }
      rollupRowsRead.inc({ grain: scan.grain }, read);
      rowsRead += read;
    }
    return { sums, rowsRead };
  }

  /** The part-quarters of the buckets answered from the state (before the bound, off a quarter-hour). */
  static stateSegments(buckets: SeriesBucketBounds[], bound: number): (StateSegment & { bucket: number })[] {
    return buckets.flatMap((bucket, index) =>
      decomposePeriod({ start: bucket.start, end: bucket.end }).minutes.flatMap((range) =>
        coarsenedParts(range.from!.getTime(), range.to.getTime(), bound).state.map((segment) => ({ ...segment, bucket: index })),
      ),
    );
  }

  /** The statements of one set of buckets (bound: where minute rows start); public for the benchmark's EXPLAIN. */
  static buildScans(buckets: SeriesBucketBounds[], scopes: ScopeKey[], bound = Number.NEGATIVE_INFINITY): SeriesScan[] {
    const ranges: Record<Grain, { index: number[]; from: string[]; to: string[] }> = {
      day: { index: [], from: [], to: [] },
      hour: { index: [], from: [], to: [] },
      quarter: { index: [], from: [], to: [] },
      minute: { index: [], from: [], to: [] },
    };
    buckets.forEach((bucket, index) => {
      const parts = decomposePeriod({ start: bucket.start, end: bucket.end });
      const add = (grain: Grain, from: Date | null, to: Date) => {
        if (from !== null && from >= to) return;
        ranges[grain].index.push(index);
        ranges[grain].from.push(from!.toISOString());
        ranges[grain].to.push(to.toISOString());
      };
      forEachRollupRange(parts, bound, add);
    });
    const agents = scopes.map((s) => s.agentId);
    const traffics = scopes.map((s) => s.traffic);
    return GRAINS.filter((grain) => ranges[grain].index.length > 0).map((grain) => ({
      grain,
      // One aggregate per (scope, range) in a LATERAL subquery: PostgreSQL cannot flatten it into a join, so every range is an
      // index range scan of the primary key (agent_id, traffic, bucket) reading exactly its rows, whatever the planner
      // estimates for the unnest arrays (as a join it scanned every row of the platform and filtered).
      sql: `WITH s AS (SELECT * FROM unnest($1::text[], $2::text[]) AS s(agent_id, traffic)),
                 b AS (SELECT * FROM unnest($3::int[], $4::timestamptz[], $5::timestamptz[]) AS b(bucket_index, lo, hi))
            SELECT s.agent_id, s.traffic, b.bucket_index, x.*
              FROM s CROSS JOIN b
             CROSS JOIN LATERAL (
               SELECT ${SERIES_FIGURES.map((name) => `sum(r.${name})::bigint AS ${name}`).join(', ')}, count(*) AS rows_read
                 FROM reporting.rollup_${grain} r
                WHERE r.agent_id = s.agent_id AND r.traffic = s.traffic AND r.bucket >= b.lo AND r.bucket < b.hi) x
             WHERE x.rows_read > 0`,
      parameters: [agents, traffics, ranges[grain].index, ranges[grain].from, ranges[grain].to],
    }));
  }

  /**
   * The first minute before `end` in which a scope has anything counted (one of the five figures
   * not zero), per scope: where an `all` series starts. Each is the first qualifying row of the
   * scope's minute rollups in key order, so the scan usually stops at the first row. Before the
   * minute window it is the first such quarter-hour's start, which lies in the same local day
   * (local midnights are on quarter-hours). One difference remains: a quarter whose minutes'
   * earnings cancel out exactly, with nothing else counted in it, no longer counts; the series
   * then starts at a later day, and only buckets whose five figures are all zero are left out.
   */
  async firstCountedMinutes(scopes: ScopeKey[], end: Date, manager: EntityManager): Promise<Map<string, Date>> {
    if (scopes.length === 0) return new Map();
    const first = new Map<string, Date>();
    for (const table of ['rollup_quarter', 'rollup_minute']) {
      const rows: { agent_id: string; traffic: string; bucket: Date }[] = await manager.query(
        `SELECT s.agent_id, s.traffic, f.bucket
           FROM unnest($1::text[], $2::text[]) AS s(agent_id, traffic)
          CROSS JOIN LATERAL (
            SELECT r.bucket FROM reporting.${table} r
             WHERE r.agent_id = s.agent_id AND r.traffic = s.traffic AND r.bucket < $3::timestamptz AND (${NONZERO})
             ORDER BY r.bucket LIMIT 1) f`,
        [scopes.map((s) => s.agentId), scopes.map((s) => s.traffic), end.toISOString()],
      );
      for (const row of rows) {
        const key = scopeKey(row.agent_id, row.traffic);
        const known = first.get(key);
        if (!known || row.bucket < known) first.set(key, row.bucket);
      }
    }
    return first;
  }
}
