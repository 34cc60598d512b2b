import { REPORT_COUNTERS, TIME_RANGES, type ReportCounters } from '#libs/contracts';
import { createReportingDataSource } from '../../reporting-projection/src/database/reporting.data-source.js';
import { RollupQueryRepository } from '../../reporting-projection/src/publication/rollup-query.repository.js';
import { DEFAULT_TIMEZONE } from '../../reporting-projection/src/publication/reporting-timezones.js';
import { reportPeriod, MINUTE_MS, type Period } from '../../reporting-projection/src/rules/periods.js';

type Figure = (typeof REPORT_COUNTERS)[number];

/**
 * Each figure recomputed from the state itself, independently of the projection's code: a
 * recommendation counts once at its level in its creation minute, its USD entries unless one is
 * not USD, pending while billable without an entry; an entry still unattributed is under review
 * in the minute it was recorded. `%1$s`/`%2$s`: the bounds' placeholders of one range.
 */
const RECOMMENDATION_FIGURES: Partial<Record<Figure, string>> = {
  exposures: `count(*) FILTER (WHERE level >= 1 AND %s)`,
  clicks: `count(*) FILTER (WHERE level >= 2 AND %s)`,
  engagements: `count(*) FILTER (WHERE level = 3 AND %s)`,
  conversions: `count(*) FILTER (WHERE level = 4 AND %s)`,
  earnings_micros: `coalesce(sum(attributed_usd_micros) FILTER (WHERE level >= 0 AND foreign_currency_entries = 0 AND %s), 0)`,
  earnings_excluded_recommendations: `count(*) FILTER (WHERE level >= 0 AND foreign_currency_entries > 0 AND %s)`,
  pending_earnings_recommendations: `count(*) FILTER (WHERE level >= 0 AND billable AND attributed_entries = 0 AND %s)`,
};

interface Checked {
  traffic: string;
  time_range: string;
  start_at: string | null;
  end_at: string;
  /** Where the comparison starts: the period start, or the oldest state still kept when later. */
  checked_from: string | null;
  figures: ReportCounters;
}

export interface VerifyOutcome {
  output: { agent_id: string; checked: Checked[]; mismatches: { traffic: string; time_range: string; figure: Figure; rollups: number; recomputed: number }[] };
  exitCode: 0 | 1;
}

/**
 * `ops reporting verify` (DESIGN §10): for each traffic and each of the six ranges at the last
 * published cutoff, the platform's figures recomputed from the per-recommendation state and
 * accounting entries still kept are compared with the sum of the rollups the reports read, over
 * the part of the period that state still covers (whole weeks: the store drops a week at a time).
 * Both sides are read in one REPEATABLE READ snapshot, so ingestion meanwhile changes neither.
 */
export async function verifyReporting(databaseUrl: string, agentId: string, traffics: string[]): Promise<VerifyOutcome> {
  const dataSource = createReportingDataSource(databaseUrl, 1);
  await dataSource.initialize();
  try {
    return await dataSource.transaction('REPEATABLE READ', async (manager) => {
      // Before the snapshot (as the publication does): a coarsening of old minutes cannot drop a week between the reads.
      await manager.query('LOCK TABLE ONLY reporting.rollup_minute, reporting.rollup_quarter IN ACCESS SHARE MODE');
      const [state] = await manager.query(`SELECT processed_through FROM reporting.publication_state WHERE id = 1`);
      const end = new Date(Math.floor((state?.processed_through ?? new Date()).getTime() / MINUTE_MS) * MINUTE_MS);
      const [zone] = await manager.query(`SELECT timezone FROM reporting.platform_timezone WHERE agent_id = $1`, [agentId]);
      const [kept] = await manager.query(
        `SELECT min(substring(c.relname FROM '_w([0-9]{8})$')) AS first_week FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'reporting.recommendation'::regclass`,
      );
      const keptFrom = kept?.first_week ? new Date(`${kept.first_week.slice(0, 4)}-${kept.first_week.slice(4, 6)}-${kept.first_week.slice(6, 8)}T00:00:00Z`) : null;
      const ranges = TIME_RANGES.map((timeRange) => {
        const period = reportPeriod(timeRange, end, zone?.timezone ?? DEFAULT_TIMEZONE);
        const from = keptFrom && (period.start === null || period.start < keptFrom) ? keptFrom : period.start;
        return { timeRange, period, checked: { start: from, end: period.end } as Period };
      });
      const rollups = new RollupQueryRepository(dataSource);
      const checked: Checked[] = [];
      const mismatches: VerifyOutcome['output']['mismatches'] = [];
      for (const traffic of traffics) {
        const published = await rollups.sumForPeriods(ranges.map((r) => r.checked), [{ agentId, traffic }], manager);
        const recomputed = await recompute(manager, agentId, traffic, ranges.map((r) => r.checked));
        ranges.forEach((range, i) => {
          const fromRollups = [...published[i].values()][0];
          checked.push({
            traffic,
            time_range: range.timeRange,
            start_at: range.period.start?.toISOString() ?? null,
            end_at: range.period.end.toISOString(),
            checked_from: range.checked.start?.toISOString() ?? null,
            figures: recomputed[i],
          });
          for (const figure of REPORT_COUNTERS) {
            if (fromRollups[figure] !== recomputed[i][figure]) {
              mismatches.push({ traffic, time_range: range.timeRange, figure, rollups: fromRollups[figure], recomputed: recomputed[i][figure] });
            }
          }
        });
      }
      return { output: { agent_id: agentId, checked, mismatches }, exitCode: mismatches.length > 0 ? 1 : 0 };
    });
  } finally {
    await dataSource.destroy();
  }
}

/** The figures of each period from the state: one pass over each table with a FILTER per period. */
async function recompute(manager: { query: (sql: string, parameters: unknown[]) => Promise<Record<string, string>[]> }, agentId: string, traffic: string, periods: Period[]): Promise<ReportCounters[]> {
  const parameters: unknown[] = [agentId, traffic];
  const bounds = periods.map((period) => {
    parameters.push(period.start?.toISOString() ?? null, period.end.toISOString());
    const lo = `$${parameters.length - 1}::timestamptz`;
    const hi = `$${parameters.length}::timestamptz`;
    return (column: string) => `(${lo} IS NULL OR ${column} >= ${lo}) AND ${column} < ${hi}`;
  });
  const recommendationSums = periods.flatMap((_, i) =>
    Object.entries(RECOMMENDATION_FIGURES).map(([figure, sql]) => `${sql.replace('%s', bounds[i]('created_at'))}::text AS p${i}_${figure}`),
  );
  const [recommendations] = await manager.query(
    `SELECT ${recommendationSums.join(', ')} FROM reporting.recommendation WHERE agent_id = $1 AND traffic = $2`,
    parameters,
  );
  const reviewSums = periods.map((_, i) => `count(*) FILTER (WHERE ${bounds[i]('recorded_at')})::text AS p${i}_accounting_review_required`);
  const [entries] = await manager.query(
    `SELECT ${reviewSums.join(', ')} FROM reporting.accounting_entry WHERE agent_id = $1 AND traffic = $2 AND NOT attributed`,
    parameters,
  );
  return periods.map((_, i) => Object.fromEntries(REPORT_COUNTERS.map((figure) => [figure, Number((recommendations[`p${i}_${figure}`] ?? entries[`p${i}_${figure}`]) ?? 0)])) as ReportCounters);
}
