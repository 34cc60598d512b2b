import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, ValidateBy } from 'class-validator';
import {
  BREAKDOWN_BYS,
  BREAKDOWN_MAX_LIMIT,
  BREAKDOWN_SORTS,
  DEFAULT_BREAKDOWN_LIMIT,
  DEFAULT_BREAKDOWN_SORT,
  DEFAULT_TIME_RANGE,
  FastCheck,
  TIME_RANGES,
  shownValue,
  type BreakdownBy,
  type BreakdownSort,
  type TimeRange,
} from '#libs/contracts';
import { FormatParameter, SERIES_FORMATS, TimeRangeParameter, type SeriesFormat } from './series-query.dto.js';

/** limit: decimal digits only (no sign, exponent, fraction or spaces), 1–100. */
function LimitParameter(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: BREAKDOWN_MAX_LIMIT,
      default: DEFAULT_BREAKDOWN_LIMIT,
      description: `How many ids to list, an integer from 1 to ${BREAKDOWN_MAX_LIMIT} (default ${DEFAULT_BREAKDOWN_LIMIT}); every other id is summed in other.`,
      example: 10,
    }),
    Transform(({ value }) => (typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value)),
    ValidateBy({
      name: 'isBreakdownLimit',
      validator: {
        validate: (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= BREAKDOWN_MAX_LIMIT,
        defaultMessage: (args) => `limit must be an integer from 1 to ${BREAKDOWN_MAX_LIMIT}; got ${shownValue(args?.value)}.`,
      },
    }),
  );
}

const FAST_KEYS: readonly string[] = ['time_range', 'by', 'sort', 'format'];
const isOneOf = (values: readonly unknown[], value: unknown) => values.includes(value);

/**
 * The query of the hot path, accepted without class-validator: `by` and any of time_range, sort
 * and format, each valid. A `limit` (a string to convert) and anything else take the DTO's
 * validation, so this accepts only what the DTO accepts, with the same result.
 */
export function passesBreakdownQueryFastCheck(query: unknown): boolean {
  if (typeof query !== 'object' || query === null || Array.isArray(query)) return false;
  const q = query as Record<string, unknown>;
  return (
    Object.keys(q).every((key) => FAST_KEYS.includes(key)) &&
    isOneOf(BREAKDOWN_BYS, q.by) &&
    (q.time_range === undefined || isOneOf(TIME_RANGES, q.time_range)) &&
    (q.sort === undefined || isOneOf(BREAKDOWN_SORTS, q.sort)) &&
    (q.format === undefined || isOneOf(SERIES_FORMATS, q.format))
  );
}

/** The query of GET /agent/reporting/breakdown (DESIGN §9): time_range, by, limit, sort, format. */
@FastCheck(passesBreakdownQueryFastCheck)
export class BreakdownQueryDto {
  @TimeRangeParameter('The period, as for GET /agent/reporting: today (from local midnight), 1d/7d/30d/90d (rolling windows ending at processed_through) or all.')
  time_range: TimeRange = DEFAULT_TIME_RANGE;

  @ApiProperty({
    type: 'string',
    enum: BREAKDOWN_BYS,
    description: 'ad or product: the ad_id or product_id of each recommendation\'s generated event (null, "unattributed", until that event arrives).',
    example: 'ad',
  })
  @IsIn(BREAKDOWN_BYS, { message: ({ value }) => (value === undefined ? 'by is required: ad or product.' : `Unsupported by ${shownValue(value)}: ad or product.`) })
  by: BreakdownBy;

  @LimitParameter()
  limit: number = DEFAULT_BREAKDOWN_LIMIT;

  @ApiPropertyOptional({
    type: 'string',
    enum: BREAKDOWN_SORTS,
    default: DEFAULT_BREAKDOWN_SORT,
    description: 'The figure the rows are ordered by, descending; ties by id ascending, the unattributed row after every id.',
    example: 'clicks',
  })
  @IsIn(BREAKDOWN_SORTS, { message: ({ value }) => `Unsupported sort ${shownValue(value)}: ${BREAKDOWN_SORTS.join(', ')}.` })
  sort: BreakdownSort = DEFAULT_BREAKDOWN_SORT;

  @FormatParameter('a header line, one line per row and other last (RFC 4180)')
  format: SeriesFormat = 'json';
}
