import { IsIn, IsInt, Max, Min } from 'class-validator';
import { FastCheck } from './fast-check.js';
import { TRAFFICS } from './recommendation-event.dto.js';
import { ReportRequestDto, TIME_RANGES, type PreparingReport, type TimeRange } from './reporting.dto.js';
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

const BREAKDOWN_REQUEST_KEYS = ['agent_id', 'traffic', 'time_range', 'by', 'limit', 'sort'];

/** The hot-path pre-check of BreakdownRequestDto (accepts only what class-validator accepts, unknown fields refused). */
export function passesBreakdownRequestFastCheck(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  return (
    keys.length === BREAKDOWN_REQUEST_KEYS.length &&
    keys.every((key) => BREAKDOWN_REQUEST_KEYS.includes(key)) &&
    typeof v.agent_id === 'string' &&
    v.agent_id.length >= 1 &&
    v.agent_id.length <= 200 &&
    (TRAFFICS as readonly unknown[]).includes(v.traffic) &&
    (TIME_RANGES as readonly unknown[]).includes(v.time_range) &&
    (BREAKDOWN_BYS as readonly unknown[]).includes(v.by) &&
    Number.isSafeInteger(v.limit) &&
    (v.limit as number) >= 1 &&
    (v.limit as number) <= BREAKDOWN_MAX_LIMIT &&
    (BREAKDOWN_SORTS as readonly unknown[]).includes(v.sort)
  );
}

/**
 * Request of `reporting.v1.breakdown.get`: the report's scope (ReportRequestDto's fields and
 * rules), the dimension, and which rows to list; the gateway has authenticated the caller and
 * chosen the traffic.
 */
@FastCheck(passesBreakdownRequestFastCheck)
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
