import { REPORT_CURRENCY, type ReportSeries } from '#libs/contracts';
import type { SeriesSnapshot } from '../publication/series-snapshot.js';

/** The series of DESIGN §7 from a stored snapshot, with the status decided at read time. */
export function presentSeries(snapshot: SeriesSnapshot, status: ReportSeries['status']): ReportSeries {
  return {
    agent_id: snapshot.agentId,
    time_range: snapshot.timeRange,
    granularity: snapshot.granularity,
    timezone: snapshot.timezone,
    is_test: snapshot.traffic === 'test',
    start_at: snapshot.start ? snapshot.start.toISOString() : null,
    end_at: snapshot.end.toISOString(),
    processed_through: snapshot.processedThrough.toISOString(),
    status,
    currency: REPORT_CURRENCY,
    buckets: snapshot.buckets,
  };
}
