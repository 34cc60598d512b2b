import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { SERIES_GRANULARITIES, type ReportSeries, type SeriesBucket, type SeriesGranularity } from '#libs/contracts';
import { seriesCsv } from './series-csv.js';
import { FigureProperties, FiguresDto, SPLIT_EXAMPLE_PERIOD, SplitReportDto, SplitReportProperties, TIMESTAMP } from './split-report.dto.js';

/**
 * Response schemas of the series routes for the OpenAPI document (DESIGN §7). They describe the
 * `ReportSeries` and `SeriesBucket` interfaces of libs/contracts, which stay the definition
 * (`implements` makes the compiler refuse a class that lacks a field).
 */

/** A daily 7d series in Asia/Kathmandu (local midnight is 18:15 UTC): the first and last buckets clipped to the period. */
export const SERIES_EXAMPLE: ReportSeries = {
  agent_id: 'agent_7f3c2a',
  time_range: '7d',
  granularity: 'day',
  timezone: 'Asia/Kathmandu',
  ...SPLIT_EXAMPLE_PERIOD,
  buckets: [
    ['2026-11-18T10:00:00.000Z', '2026-11-18T18:15:00.000Z', 96, 11, 2, 0, 2400000],
    ['2026-11-18T18:15:00.000Z', '2026-11-19T18:15:00.000Z', 262, 30, 5, 1, 6820000],
    ['2026-11-19T18:15:00.000Z', '2026-11-20T18:15:00.000Z', 270, 31, 6, 2, 7010000],
    ['2026-11-20T18:15:00.000Z', '2026-11-21T18:15:00.000Z', 251, 28, 5, 1, 6530000],
    ['2026-11-21T18:15:00.000Z', '2026-11-22T18:15:00.000Z', 244, 27, 4, 1, 6300000],
    ['2026-11-22T18:15:00.000Z', '2026-11-23T18:15:00.000Z', 268, 32, 6, 2, 7150000],
    ['2026-11-23T18:15:00.000Z', '2026-11-24T18:15:00.000Z', 277, 35, 6, 1, 7480000],
    ['2026-11-24T18:15:00.000Z', '2026-11-25T10:00:00.000Z', 172, 18, 3, 1, 4560000],
  ].map(([start_at, end_at, exposures, clicks, engagements, conversions, earnings_micros]) => ({
    start_at,
    end_at,
    exposures,
    clicks,
    engagements,
    conversions,
    earnings_micros,
  })) as SeriesBucket[],
};

/** The same series as CSV. */
export const SERIES_CSV_EXAMPLE = seriesCsv(SERIES_EXAMPLE);

@ApiSchema({ name: 'SeriesBucket', description: 'One bucket: the figures of the recommendations created in [start_at, end_at).' })
@FigureProperties(SERIES_EXAMPLE.buckets[1])
export class SeriesBucketDto extends FiguresDto implements SeriesBucket {
  @ApiProperty({ ...TIMESTAMP, description: 'Inclusive start (UTC): a local midnight or hour start of the reporting timezone, or the period start for the first bucket.', example: SERIES_EXAMPLE.buckets[1].start_at })
  start_at: string;

  @ApiProperty({ ...TIMESTAMP, description: 'Exclusive end (UTC): the next bucket\'s start, or the period end for the last bucket.', example: SERIES_EXAMPLE.buckets[1].end_at })
  end_at: string;
}

@ApiSchema({
  name: 'ReportSeries',
  description:
    'The report of a scope split into buckets of the platform reporting timezone (HTTP 200). Buckets are ascending and consecutive and cover [start_at, end_at) exactly ' +
    '(for all: from the local day of the first counted recommendation); summed over the buckets, each figure equals the Report of the same scope at the same processed_through.',
})
@SplitReportProperties(SERIES_EXAMPLE, {
  split: { granularity: { type: 'string', enum: SERIES_GRANULARITIES, description: 'The bucket size.', example: SERIES_EXAMPLE.granularity } },
  timezone: 'IANA timezone whose local midnights or hours are the bucket edges (the platform reporting timezone).',
  processedThrough: 'Processing cutoff the series reflects; the Report with the same value has the bucket sums as its figures.',
  content: { buckets: { type: [SeriesBucketDto], description: 'Ascending and consecutive; empty for all when nothing has been counted.' } },
})
export class ReportSeriesDto extends SplitReportDto implements ReportSeries {
  granularity: SeriesGranularity;
  buckets: SeriesBucketDto[];
}
