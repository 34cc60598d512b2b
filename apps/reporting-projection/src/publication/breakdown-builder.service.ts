import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { BREAKDOWN_SORTS, type BreakdownRow, type BreakdownSort } from '#libs/contracts';
import { BREAKDOWN_BUCKET_MS, UNATTRIBUTED, type BreakdownFigures } from '../ingestion/breakdown-deltas.js';
import { reportPeriod, type Period } from '../rules/periods.js';
import { BREAKDOWN_TOP, type BreakdownScopeRef, type BreakdownSnapshot } from './breakdown-snapshot.js';
import { DEFAULT_TIMEZONE, reportingTimezones } from './reporting-timezones.js';

/** The hour-aligned middle of a period (from breakdown_pair and breakdown_rollup) and its edges shorter than an hour (from the per-recommendation state). */
export interface BreakdownParts {
  /** Rollup buckets in [from, to); from null: from the first. */
  rollup: { from: Date | null; to: Date } | null;
  /** Creation-time ranges [from, to) read from reporting.recommendation. */
  edges: { from: Date; to: Date }[];
}

const floorTo = (ms: number) => Math.floor(ms / BREAKDOWN_BUCKET_MS) * BREAKDOWN_BUCKET_MS;
const ceilTo = (ms: number) => Math.ceil(ms / BREAKDOWN_BUCKET_MS) * BREAKDOWN_BUCKET_MS;

/**
 * Splits a period into whole hours of breakdown_rollup and the parts at either end that do not
 * fill an hour: a local midnight may fall on a quarter hour, a rolling window and the processing
 * cutoff on any minute. Every minute of the period is in exactly one part.
 */
export function breakdownParts(period: Period): BreakdownParts {
  const end = period.end.getTime();
  const lastHour = floorTo(end);
  if (period.start === null) {
    return { rollup: { from: null, to: new Date(lastHour) }, edges: lastHour < end ? [{ from: new Date(lastHour), to: period.end }] : [] };
  }
  const start = period.start.getTime();
  const firstHour = ceilTo(start);
  if (firstHour >= lastHour) return { rollup: null, edges: start < end ? [{ from: period.start, to: period.end }] : [] };
  const edges: { from: Date; to: Date }[] = [];
  if (start < firstHour) edges.push({ from: period.start, to: new Date(firstHour) });
  if (lastHour < end) edges.push({ from: new Date(lastHour), to: period.end });
  return { rollup: { from: new Date(firstHour), to: new Date(lastHour) }, edges };
}

interface RankedRow {
  id: string;
  exposures: string;
  clicks: string;
  engagements: string;
  conversions: string;
  earnings_micros: string;
  t_exposures: string;
  t_clicks: string;
  t_engagements: string;
  t_conversions: string;
  t_earnings_micros: string;
  r_exposures: string;
  r_clicks: string;
  r_conversions: string;
  r_earnings_micros: string;
}

/** Descending by the figure, then by id ascending in code-unit order, the unattributed row after every id. */
const ORDER = (figure: BreakdownSort) => `ORDER BY ${figure} DESC, (id = '') ASC, id COLLATE "C" ASC`;

const FIGURES_SQL = `sum(exposures)::bigint AS exposures, sum(clicks)::bigint AS clicks, sum(engagements)::bigint AS engagements,
  sum(conversions)::bigint AS conversions, sum(earnings_micros)::bigint AS earnings_micros`;

/**
 * The contribution of the recommendations created in [from, to) (an edge of a period), as
 * rules/counting.ts contributionOf computes it. The bounds are scalar parameters, null for an
 * edge the period does not have: the planner then reads only the weekly partitions of the range
 * through their indexes. Given as arrays joined through unnest, the bounds are unknown at
 * planning and every week of the platform is scanned, which grew with the store (1.4–1.8 s for
 * one 90d scope at 20,000,000 events, against 37 ms).
 */
const stateEdge = (from: string, to: string) => `SELECT COALESCE(CASE WHEN $3 = 'ad' THEN NULLIF(ad_id, '') ELSE NULLIF(product_id, '') END, '${UNATTRIBUTED}'),
           (level >= 1)::int, (level >= 2)::int, (level = 3)::int, (level = 4)::int,
           CASE WHEN foreign_currency_entries > 0 THEN 0 ELSE attributed_usd_micros END
      FROM reporting.recommendation r
     WHERE agent_id = $1 AND traffic = $2 AND level >= 0 AND r.created_at >= ${from}::timestamptz AND r.created_at < ${to}::timestamptz`;

/**
 * One scope's breakdown in one statement: the hours of breakdown_pair (its rows taken by the
 * dimension's id), for a period without a start (`all`) the folded weeks before them
 * (breakdown_archive, one row per pair: StoragePartitions.foldBreakdowns), and the hours of the
 * legacy, read-only breakdown_rollup (its rows of the dimension: the history written before the
 * pair rows, which later changes of the same recommendations correct through the pair rows), and
 * the edges' recommendations
 * (their contribution as rules/counting.ts contributionOf computes it), summed per id; ids whose
 * five figures are all zero are not rows. Each row carries the totals (a window over all ids) and
 * its rank under each sort key; only rows within the first BREAKDOWN_TOP of some key come back.
 */
const BREAKDOWN_SQL = `
  WITH parts AS (
    SELECT CASE WHEN $3 = 'ad' THEN ad_id ELSE product_id END AS id, exposures, clicks, engagements, conversions, earnings_micros
      FROM reporting.breakdown_pair
     WHERE agent_id = $1 AND traffic = $2 AND $4::boolean
       AND bucket < $6::timestamptz AND ($5::timestamptz IS NULL OR bucket >= $5::timestamptz)
    UNION ALL
    SELECT CASE WHEN $3 = 'ad' THEN ad_id ELSE product_id END, exposures, clicks, engagements, conversions, earnings_micros
      FROM reporting.breakdown_archive
     WHERE agent_id = $1 AND traffic = $2 AND $4::boolean AND $5::timestamptz IS NULL
    UNION ALL
    SELECT id, exposures, clicks, engagements, conversions, earnings_micros
      FROM reporting.breakdown_rollup
     WHERE agent_id = $1 AND traffic = $2 AND dimension = $3 AND $4::boolean
       AND bucket < $6::timestamptz AND ($5::timestamptz IS NULL OR bucket >= $5::timestamptz)
    UNION ALL
    ${stateEdge('$7', '$8')}
    UNION ALL
    ${stateEdge('$9', '$10')}
  ), per_id AS (
    SELECT id, ${FIGURES_SQL} FROM parts GROUP BY id
    HAVING sum(exposures) <> 0 OR sum(clicks) <> 0 OR sum(engagements) <> 0 OR sum(conversions) <> 0 OR sum(earnings_micros) <> 0
  ), ranked AS (
    SELECT *,
      sum(exposures) OVER () AS t_exposures, sum(clicks) OVER () AS t_clicks, sum(engagements) OVER () AS t_engagements,
      sum(conversions) OVER () AS t_conversions, sum(earnings_micros) OVER () AS t_earnings_micros,
      ${BREAKDOWN_SORTS.map((figure) => `row_number() OVER (${ORDER(figure)}) AS r_${figure}`).join(',\n      ')}
    FROM per_id
  )
  SELECT * FROM ranked WHERE ${BREAKDOWN_SORTS.map((figure) => `r_${figure} <= ${BREAKDOWN_TOP}`).join(' OR ')}`;

function zeroFigures(): BreakdownFigures {
  return { exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 };
}

/**
 * Computes the breakdowns of many scopes at one processing cutoff (DESIGN §9), with the same
 * manager (the same database snapshot) as the report snapshots, so that each sums to the report
 * of its scope. The periods are the reports' (reportPeriod). Each scope keeps, per sort key, its
 * first BREAKDOWN_TOP rows and the totals, so that a request of any limit and sort is answered
 * from memory (docs/decisions/breakdowns-by-ad-and-product.md).
 */
// Raw SQL (publication): one set-based statement per scope; no entities in schema reporting.
@Injectable()
export class BreakdownBuilder {
  constructor(private readonly dataSource: DataSource) {}

  async build(scopes: BreakdownScopeRef[], processedThrough: Date, producedAt: Date, manager: EntityManager = this.dataSource.manager): Promise<BreakdownSnapshot[]> {
    if (scopes.length === 0) return [];
    const timezones = await reportingTimezones(manager, [...new Set(scopes.map((s) => s.agentId))]);
    const [{ before_ms }] = (await manager.query(`SELECT extract(epoch FROM archived_before) * 1000 AS before_ms FROM reporting.breakdown_archive_window`)) as {
      before_ms: string;
    }[];
    const archivedBefore = Number(before_ms);
    const snapshots: BreakdownSnapshot[] = [];
    for (const scope of scopes) {
      const timezone = timezones.get(scope.agentId) ?? DEFAULT_TIMEZONE;
      const period = reportPeriod(scope.timeRange, processedThrough, timezone);
      const parts = breakdownParts(period);
      // The archive has no hours: only a period without a start may reach it (the fold's bound keeps every other start after it).
      if (parts.rollup?.from && parts.rollup.from.getTime() < archivedBefore) {
        throw new Error(`breakdown of ${scope.agentId}/${scope.traffic}/${scope.timeRange} starts before the folded breakdown weeks (${new Date(archivedBefore).toISOString()})`);
      }
      const rows: RankedRow[] = await manager.query(BREAKDOWN_SQL, [
        scope.agentId,
        scope.traffic,
        scope.by,
        parts.rollup !== null,
        parts.rollup?.from?.toISOString() ?? null,
        (parts.rollup?.to ?? period.end).toISOString(),
        ...[0, 1].flatMap((i) => [parts.edges[i]?.from.toISOString() ?? null, parts.edges[i]?.to.toISOString() ?? null]),
      ]);
      const totals = zeroFigures();
      if (rows.length > 0) {
        totals.exposures = Number(rows[0].t_exposures);
        totals.clicks = Number(rows[0].t_clicks);
        totals.engagements = Number(rows[0].t_engagements);
        totals.conversions = Number(rows[0].t_conversions);
        totals.earnings_micros = Number(rows[0].t_earnings_micros);
      }
      const tops = Object.fromEntries(
        BREAKDOWN_SORTS.map((sort) => [
          sort,
          rows
            .filter((row) => Number(row[`r_${sort}`]) <= BREAKDOWN_TOP)
            .sort((a, b) => Number(a[`r_${sort}`]) - Number(b[`r_${sort}`]))
            .map(
              (row): BreakdownRow => ({
                id: row.id === UNATTRIBUTED ? null : row.id,
                exposures: Number(row.exposures),
                clicks: Number(row.clicks),
                engagements: Number(row.engagements),
                conversions: Number(row.conversions),
                earnings_micros: Number(row.earnings_micros),
              }),
            ),
        ]),
      ) as Record<BreakdownSort, BreakdownRow[]>;
      snapshots.push({
        ...scope,
        start: period.start,
        end: period.end,
        processedThrough,
        updatedAt: producedAt,
        timezone,
        totals,
        tops,
      });
    }
    return snapshots;
  }
}
