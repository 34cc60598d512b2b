import { REPORT_COUNTERS, type ReportCounters, type Traffic } from '#libs/contracts';
import { MINUTE_MS, type DemoWeek } from './week-plan.js';

/** The figures of a Report (SPEC "Counting rules", DESIGN §5) that the demo's events produce. */
export interface ExpectedReport extends ReportCounters {
  /** The watermark the report carries (null: none, coverage `unavailable`). */
  accounting_reconciled_through: string | null;
}

/**
 * What a report of `traffic` over [start, end) shows for the demo week and nothing else (start
 * null: all history), computed from the plan: each recommendation counted once at its highest
 * level in the period of its creation minute; the USD entries of a recommendation summed
 * unless one of them is in another currency (then it is excluded whole); billable ones without
 * an entry pending; entries naming no recommendation under review in the period they were
 * recorded.
 */
export function expectedReport(week: DemoWeek, traffic: Traffic, start: number | null, end: number): ExpectedReport {
  const inPeriod = (at: number) => {
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    return (start === null || minute >= start) && minute < end;
  };
  const report: ExpectedReport = {
    ...(Object.fromEntries(REPORT_COUNTERS.map((counter) => [counter, 0])) as ReportCounters),
    accounting_reconciled_through: traffic === 'live' ? new Date(week.reconciledThrough).toISOString() : null,
  };
  for (const recommendation of week.recommendations) {
    if (recommendation.traffic !== traffic || !inPeriod(recommendation.createdAt)) continue;
    if (recommendation.level >= 1) report.exposures += 1;
    if (recommendation.level >= 2) report.clicks += 1;
    if (recommendation.level === 3) report.engagements += 1;
    if (recommendation.level === 4) report.conversions += 1;
    if (recommendation.entries.some((entry) => entry.currency !== 'USD')) report.earnings_excluded_recommendations += 1;
    else report.earnings_micros += recommendation.entries.reduce((sum, entry) => sum + entry.amount_micros, 0);
    if (recommendation.billable && recommendation.entries.length === 0) report.pending_earnings_recommendations += 1;
  }
  for (const entry of week.unattributed) {
    if (entry.traffic === traffic && inPeriod(entry.recordedAt)) report.accounting_review_required += 1;
  }
  return report;
}
