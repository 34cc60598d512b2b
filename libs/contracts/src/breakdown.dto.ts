import { IsIn, IsInt, Max, Min } from 'class-validator';
import { ReportRequestDto, type PreparingReport, type TimeRange } from './reporting.dto.js';
import type { SeriesFigures } from './series.dto.js';

/** What a breakdown splits the Report by (DESIGN §9). */
export const BREAKDOWN_BYS = ['ad', 'product'] as const;
export type BreakdownBy = (typeof BREAKDOWN_BYS)[number];

/** The figures a breakdown may be sorted by (descending, ties by id ascending). */
export const BREAKDOWN_SORTS = ['exposures', 'clicks', 'conversions', 'earnings_micros'] as const;
export type BreakdownSort = (typeof BREAKDOWN_SORTS)[number];
export const DEFAULT_BREAKDOWN_SORT: BreakdownSort = 'earnings_micros';

export const BREAKDOWN_MAX_LIMIT = 100;
export const DEFAULT_BREAKDOWN_LIMIT = 20;

/**
 * Request of `reporting.v1.breakdown.get`: the report's scope (ReportRequestDto's fields and
 * rules), the dimension, and which rows to list; the gateway has authenticated the caller and
 * chosen the traffic.
 */
export class BreakdownRequestDto extends ReportRequestDto {
  @IsIn(BREAKDOWN_BYS)
  by: BreakdownBy;

  @IsInt() @Min(1) @Max(BREAKDOWN_MAX_LIMIT)
  limit: number;

  @IsIn(BREAKDOWN_SORTS)
  sort: BreakdownSort;
}

/** One row of a breakdown: an ad or product id (null: unattributed) and its five figures. */
export interface BreakdownRow extends SeriesFigures {
  id: string | null;
}

/**
 * A breakdown (DESIGN §9), as the gateway serves it with HTTP 200: the first `limit` rows in the
 * requested order and `other`, the figures of every id not listed; summed over rows and other,
 * each figure equals the Report of the same scope at the same processed_through.
 */
export interface ReportBreakdown {
  agent_id: string;
  time_range: TimeRange;
  by: BreakdownBy;
  timezone: string;
  is_test: boolean;
  start_at: string | null;
  end_at: string;
  processed_through: string;
  status: 'ready' | 'stale';
  currency: string;
  rows: BreakdownRow[];
  other: SeriesFigures;
}

/** While the scope is prepared: the 202 body of DESIGN §5. */
export type BreakdownReply = ReportBreakdown | PreparingReport;
