import {
  EARNINGS_ADAPTER_VERSION,
  EARNINGS_BASIS,
  REPORT_CURRENCY,
  REPORT_SCHEMA_VERSION,
  type PreparingReport,
  type Report,
  type TimeRange,
} from '#libs/contracts';
import type { Snapshot } from '../publication/snapshot.js';

/** The Report of SPEC from a stored snapshot, with its status (ready or stale, decided at read time: reportStatus). */
export function presentReport(snapshot: Snapshot, status: Report['status']): Report {
  return {
    agent_id: snapshot.agentId,
    time_range: snapshot.timeRange,
    start_at: snapshot.start ? snapshot.start.toISOString() : null,
    end_at: snapshot.end.toISOString(),
    currency: REPORT_CURRENCY,
    is_test: snapshot.traffic === 'test',
    report_schema_version: REPORT_SCHEMA_VERSION,
    earnings_basis: EARNINGS_BASIS,
    status,
    earnings_coverage: snapshot.coverage,
    processed_through: snapshot.processedThrough.toISOString(),
    updated_at: snapshot.updatedAt.toISOString(),
    accounting_reconciled_through: snapshot.reconciledThrough ? snapshot.reconciledThrough.toISOString() : null,
    timezone: snapshot.timezone,
    exposures: snapshot.exposures,
    clicks: snapshot.clicks,
    engagements: snapshot.engagements,
    conversions: snapshot.conversions,
    earnings_micros: snapshot.earnings_micros,
    earnings_excluded_recommendations: snapshot.earnings_excluded_recommendations,
    pending_earnings_recommendations: snapshot.pending_earnings_recommendations,
    accounting_review_required: snapshot.accounting_review_required,
    earnings_adapter_version: EARNINGS_ADAPTER_VERSION,
  };
}

export function presentPreparing(agentId: string, traffic: string, timeRange: TimeRange): PreparingReport {
  return {
    status: 'preparing',
    agent_id: agentId,
    time_range: timeRange,
    is_test: traffic === 'test',
    report_schema_version: REPORT_SCHEMA_VERSION,
  };
}
