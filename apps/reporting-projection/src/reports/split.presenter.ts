import { REPORT_CURRENCY, type Report } from '#libs/contracts';
import type { ScopeRef } from '../publication/snapshot.js';
import type { SplitPeriod } from '../publication/split-snapshot.repository.js';

/**
 * A split of the report from its stored snapshot (the series of DESIGN §7, the breakdown of §9):
 * the scope, what splits it (`key`), the period and cutoff as in the Report, then its content,
 * in the served order. The status is decided at read time.
 */
export function presentSplit<Key extends object, Content extends object>(snapshot: ScopeRef & SplitPeriod, status: Report['status'], key: Key, content: Content) {
  return {
    agent_id: snapshot.agentId,
    time_range: snapshot.timeRange,
    ...key,
    timezone: snapshot.timezone,
    is_test: snapshot.traffic === 'test',
    start_at: snapshot.start ? snapshot.start.toISOString() : null,
    end_at: snapshot.end.toISOString(),
    processed_through: snapshot.processedThrough.toISOString(),
    status,
    currency: REPORT_CURRENCY,
    ...content,
  };
}
