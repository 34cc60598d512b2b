import type { SeriesBucket, SeriesGranularity, TimeRange } from '#libs/contracts';
import { reportScopeKey } from './snapshot.js';

/** A registered series: one (platform, traffic, time range, granularity). */
export interface SeriesScopeRef {
  agentId: string;
  traffic: string;
  timeRange: TimeRange;
  granularity: SeriesGranularity;
}

/** A published series, as stored in series_snapshot; its buckets are kept as served. */
export interface SeriesSnapshot extends SeriesScopeRef {
  /** null for `all` (DESIGN §7), whose buckets start at the local day of the first counted recommendation. */
  start: Date | null;
  end: Date;
  processedThrough: Date;
  updatedAt: Date;
  timezone: string;
  buckets: SeriesBucket[];
}

export const seriesScopeKey = (scope: SeriesScopeRef) => `${reportScopeKey(scope)}\u0000${scope.granularity}`;
