import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DEFAULT_TIME_RANGE, FitsTimeRange, HOURLY_TIME_RANGES, SERIES_GRANULARITIES, TIME_RANGES, shownValue, type SeriesGranularity, type TimeRange } from '#libs/contracts';

export const SERIES_FORMATS = ['json', 'csv'] as const;
export type SeriesFormat = (typeof SERIES_FORMATS)[number];

const ALLOWED_RANGES = `Allowed values of time_range: ${TIME_RANGES.join(', ')}.`;

/** The time_range of every reporting query, with its reason when refused. */
export function TimeRangeParameter(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: 'string', enum: TIME_RANGES, default: DEFAULT_TIME_RANGE, description, example: DEFAULT_TIME_RANGE }),
    IsIn(TIME_RANGES, {
      message: ({ value }) => (value === '' ? `time_range must not be empty. ${ALLOWED_RANGES}` : `Unsupported time_range ${shownValue(value)}. ${ALLOWED_RANGES}`),
    }),
  );
}

/** format, json (default) or csv: an attachment of text/csv with `lines`. */
export function FormatParameter(lines: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      enum: SERIES_FORMATS,
      default: 'json',
      description: `json (default), or csv: text/csv; charset=utf-8 with ${lines}, as an attachment.`,
      example: 'csv',
    }),
    IsIn(SERIES_FORMATS, { message: ({ value }) => `Unsupported format ${shownValue(value)}: json or csv.` }),
  );
}

/** The query of GET /agent/reporting/series (DESIGN §7): time_range, granularity, format. */
export class SeriesQueryDto {
  @TimeRangeParameter('The period, as for GET /agent/reporting: today (from local midnight), 1d/7d/30d/90d (rolling windows ending at processed_through) or all.')
  time_range: TimeRange = DEFAULT_TIME_RANGE;

  @ApiPropertyOptional({
    type: 'string',
    enum: SERIES_GRANULARITIES,
    description: `Bucket size: hour (only for ${HOURLY_TIME_RANGES.join(', ')}) or day. Default: hour for today and 1d, day otherwise. Buckets start at local midnights (day) or local hour starts and clock changes (hour) of the platform's reporting timezone.`,
    example: 'day',
  })
  @IsOptional()
  @applyDecorators(IsIn(SERIES_GRANULARITIES, { message: ({ value }) => `Unsupported granularity ${shownValue(value)}: hour or day.` }), FitsTimeRange())
  granularity?: SeriesGranularity;

  @FormatParameter('a header line and one line per bucket (RFC 4180, UTC timestamps)')
  format: SeriesFormat = 'json';
}
