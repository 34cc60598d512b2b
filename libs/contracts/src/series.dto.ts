import { IsIn, ValidateBy } from 'class-validator';
import { ReportRequestDto, TIME_RANGES, type PreparingReport, type ReportCounters, type TimeRange } from './reporting.dto.js';

/** Bucket sizes of a report series (DESIGN §7). */
export const SERIES_GRANULARITIES = ['hour', 'day'] as const;
export type SeriesGranularity = (typeof SERIES_GRANULARITIES)[number];

/** Ranges short enough for hourly buckets (DESIGN §7: `hour` for today, 1d and 7d only). */
export const HOURLY_TIME_RANGES: readonly TimeRange[] = ['today', '1d', '7d'];

export function isGranularityAllowed(timeRange: TimeRange, granularity: SeriesGranularity): boolean {
  return granularity === 'day' || HOURLY_TIME_RANGES.includes(timeRange);
}

/** DESIGN §7: `hour` for today and 1d, `day` otherwise. */
export function defaultGranularity(timeRange: TimeRange): SeriesGranularity {
  return timeRange === 'today' || timeRange === '1d' ? 'hour' : 'day';
}

/** The reason `hour` does not fit the object's time_range (other values are another check's to refuse). */
export function granularityProblem(timeRange: unknown, granularity: unknown): string | undefined {
  if (granularity !== 'hour' || !(TIME_RANGES as readonly unknown[]).includes(timeRange)) return undefined;
  if (isGranularityAllowed(timeRange as TimeRange, 'hour')) return undefined;
  return `granularity hour is available for time_range ${HOURLY_TIME_RANGES.join(', ')} only; use day for ${String(timeRange)}.`;
}

/** `granularity` fits `time_range` of the same object. */
export function FitsTimeRange(): PropertyDecorator {
  return ValidateBy({
    name: 'fitsTimeRange',
    validator: {
      validate: (value: unknown, args) => granularityProblem((args?.object as { time_range?: unknown }).time_range, value) === undefined,
      defaultMessage: (args) => granularityProblem((args?.object as { time_range?: unknown }).time_range, args?.value) ?? 'granularity does not fit time_range.',
    },
  });
}

/**
 * Request of `reporting.v1.series.get`: the report's scope (ReportRequestDto's fields and rules)
 * and the bucket size; the gateway has authenticated the caller and chosen the traffic.
 */
export class SeriesRequestDto extends ReportRequestDto {
  @IsIn(SERIES_GRANULARITIES)
  @FitsTimeRange()
  granularity: SeriesGranularity;
}

/** The five figures of a Report that a series splits into buckets. */
export const SERIES_FIGURES = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'] as const satisfies readonly (keyof ReportCounters)[];
export type SeriesFigures = Pick<ReportCounters, (typeof SERIES_FIGURES)[number]>;

/** One bucket of a series: [start_at, end_at) in UTC, with the figures of recommendations created in it. */
export interface SeriesBucket extends SeriesFigures {
  start_at: string;
  end_at: string;
}

/**
 * A report series (DESIGN §7), as the gateway serves it with HTTP 200: buckets ascending and
 * consecutive over [start_at, end_at) (from the first bucket for `all`), whose sums equal the
 * Report of the same scope at the same processed_through.
 */
export interface ReportSeries {
  agent_id: string;
  time_range: TimeRange;
  granularity: SeriesGranularity;
  timezone: string;
  is_test: boolean;
  start_at: string | null;
  end_at: string;
  processed_through: string;
  status: 'ready' | 'stale';
  currency: string;
  buckets: SeriesBucket[];
}

/** While the series scope is prepared: the 202 body of DESIGN §5. */
export type SeriesReply = ReportSeries | PreparingReport;
