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
