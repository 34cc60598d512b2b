import type { EarningsCoverage, TimeRange } from '#libs/contracts';
import type { Counters } from '../rules/counting.js';

/** A published report of one (platform, traffic, time_range), as stored in report_snapshot. */
export interface Snapshot extends Counters {
  agentId: string;
  traffic: string;
  timeRange: TimeRange;
  start: Date | null;
  end: Date;
  processedThrough: Date;
  updatedAt: Date;
  reconciledThrough: Date | null;
  timezone: string;
  coverage: EarningsCoverage;
}

export interface ScopeRef {
  agentId: string;
  traffic: string;
  timeRange: TimeRange;
}

/** A report scope as a map key; the keys of its series start with it and a NUL (seriesScopeKey). */
export const reportScopeKey = (scope: ScopeRef) => `${scope.agentId}\u0000${scope.traffic}\u0000${scope.timeRange}`;
