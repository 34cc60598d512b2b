import type { Report } from '#libs/contracts';

/** A ready Report as reporting-projection would answer it, for tests that stand in for the projection. */
export function readyReport(agentId: string, timeRange: string, overrides: Partial<Report> = {}): Report {
  return {
    agent_id: agentId, time_range: timeRange as Report['time_range'], start_at: null, end_at: '2026-11-25T10:00:00.000Z', currency: 'USD',
    is_test: false, report_schema_version: 1, earnings_basis: 'recorded_accounting_entries', status: 'ready',
    earnings_coverage: 'unavailable', processed_through: '2026-11-25T10:00:00.000Z', updated_at: '2026-11-25T10:00:05.000Z',
    accounting_reconciled_through: null, timezone: 'UTC', exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0,
    earnings_excluded_recommendations: 0, pending_earnings_recommendations: 0, accounting_review_required: 0,
    earnings_adapter_version: 'accounting-v1',
    ...overrides,
  };
}
