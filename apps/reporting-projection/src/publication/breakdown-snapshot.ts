import type { BreakdownBy, BreakdownRow, BreakdownSort, TimeRange } from '#libs/contracts';
import type { BreakdownFigures } from '../ingestion/breakdown-deltas.js';
import { reportScopeKey } from './snapshot.js';

/** A registered breakdown: one (platform, traffic, time range, dimension). */
export interface BreakdownScopeRef {
  agentId: string;
  traffic: string;
  timeRange: TimeRange;
  by: BreakdownBy;
}

/** Rows kept per sort key: the largest `limit` a request may ask for. */
export const BREAKDOWN_TOP = 100;

/**
 * A published breakdown, as stored in breakdown_snapshot: the figures of the whole period
 * (`totals`, the Report's five figures) and, per sort key, the first BREAKDOWN_TOP rows in the
 * served order, so that any limit and sort is answered from memory (`other` = totals − rows).
 */
export interface BreakdownSnapshot extends BreakdownScopeRef {
  start: Date | null;
  end: Date;
  processedThrough: Date;
  updatedAt: Date;
  timezone: string;
  totals: BreakdownFigures;
  tops: Record<BreakdownSort, BreakdownRow[]>;
}

/** Under its report scope's key, so that the scope's first preparation drops it from the caches too. */
export const breakdownScopeKey = (scope: BreakdownScopeRef) => `${reportScopeKey(scope)}\u0000breakdown\u0000${scope.by}`;
