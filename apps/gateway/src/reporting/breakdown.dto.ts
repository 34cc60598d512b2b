import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { BREAKDOWN_BYS, REPORT_CURRENCY, TIME_RANGES, type BreakdownBy, type BreakdownRow, type ReportBreakdown, type SeriesFigures, type TimeRange } from '#libs/contracts';
import { breakdownCsv } from './breakdown-csv.js';

/**
 * Response schemas of the breakdown routes for the OpenAPI document (DESIGN §9). They describe
 * the `ReportBreakdown` and `BreakdownRow` interfaces of libs/contracts, which stay the
 * definition (`implements` makes the compiler refuse a class that lacks a field).
 */

const TIMESTAMP = { type: 'string', format: 'date-time' } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;

/** The top three ads of a 7d period by earnings, the unattributed row among them. */
export const BREAKDOWN_EXAMPLE: ReportBreakdown = {
  agent_id: 'agent_7f3c2a',
  time_range: '7d',
  by: 'ad',
  timezone: 'UTC',
  is_test: false,
  start_at: '2026-11-18T10:00:00.000Z',
  end_at: '2026-11-25T10:00:00.000Z',
  processed_through: '2026-11-25T10:00:00.000Z',
  status: 'ready',
  currency: REPORT_CURRENCY,
  rows: [
    { id: 'ad_9b1e', exposures: 612, clicks: 80, engagements: 12, conversions: 4, earnings_micros: 21400000 },
    { id: 'ad_03c7', exposures: 455, clicks: 51, engagements: 9, conversions: 2, earnings_micros: 13250000 },
    { id: null, exposures: 38, clicks: 4, engagements: 1, conversions: 0, earnings_micros: 900000 },
  ],
  other: { exposures: 735, clicks: 77, engagements: 11, conversions: 2, earnings_micros: 12700000 },
};

export const BREAKDOWN_CSV_EXAMPLE = breakdownCsv(BREAKDOWN_EXAMPLE);

@ApiSchema({ name: 'BreakdownFigures', description: 'The five figures of the Report, for the ids not listed.' })
export class BreakdownFiguresDto implements SeriesFigures {
  @ApiProperty({ ...COUNT, description: 'Unique recommendations shown.', example: BREAKDOWN_EXAMPLE.other.exposures })
  exposures: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations currently marked clicked, engaged or converted.', example: BREAKDOWN_EXAMPLE.other.clicks })
  clicks: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations currently marked engaged.', example: BREAKDOWN_EXAMPLE.other.engagements })
  engagements: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations currently marked converted.', example: BREAKDOWN_EXAMPLE.other.conversions })
  conversions: number;

  @ApiProperty({ type: 'integer', format: 'int64', description: 'Recorded net earnings in micros (may be negative after reversals).', example: BREAKDOWN_EXAMPLE.other.earnings_micros })
  earnings_micros: number;
}

@ApiSchema({ name: 'BreakdownRow', description: 'One ad or product: the figures of the recommendations attributed to it and created in the period.' })
export class BreakdownRowDto extends BreakdownFiguresDto implements BreakdownRow {
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The ad_id or product_id; null for recommendations whose generated event (with the id) has not arrived ("unattributed").',
    example: BREAKDOWN_EXAMPLE.rows[0].id,
  })
  id: string | null;
}

@ApiSchema({
  name: 'ReportBreakdown',
  description:
    'The report of a scope split by ad or product (HTTP 200): the first limit ids in the requested order and other, the figures of every id not listed. ' +
    'Summed over rows and other, each figure equals the Report of the same scope at the same processed_through.',
})
export class ReportBreakdownDto implements ReportBreakdown {
  @ApiProperty({ type: 'string', description: 'Identifier of the platform.', example: BREAKDOWN_EXAMPLE.agent_id })
  agent_id: string;

  @ApiProperty({ type: 'string', enum: TIME_RANGES, description: 'The period requested.', example: BREAKDOWN_EXAMPLE.time_range })
  time_range: TimeRange;

  @ApiProperty({ type: 'string', enum: BREAKDOWN_BYS, description: 'What the ids are: ad or product.', example: BREAKDOWN_EXAMPLE.by })
  by: BreakdownBy;

  @ApiProperty({ type: 'string', description: 'The platform reporting timezone (where today starts).', example: BREAKDOWN_EXAMPLE.timezone })
  timezone: string;

  @ApiProperty({ type: 'boolean', description: 'true for test traffic, false for live traffic.', example: false })
  is_test: boolean;

  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'Inclusive start of the period (UTC), as in the Report; null for all.', example: BREAKDOWN_EXAMPLE.start_at })
  start_at: string | null;

  @ApiProperty({ ...TIMESTAMP, description: 'Exclusive end of the period (UTC), as in the Report.', example: BREAKDOWN_EXAMPLE.end_at })
  end_at: string;

  @ApiProperty({ ...TIMESTAMP, description: 'Processing cutoff the breakdown reflects; the Report with the same value has the sums of rows and other as its figures.', example: BREAKDOWN_EXAMPLE.processed_through })
  processed_through: string;

  @ApiProperty({ type: 'string', enum: ['ready', 'stale'], description: 'As in the Report: stale when more than two minutes behind the processing cutoff.', example: BREAKDOWN_EXAMPLE.status })
  status: 'ready' | 'stale';

  @ApiProperty({ type: 'string', description: 'Currency of earnings_micros.', example: REPORT_CURRENCY })
  currency: string;

  @ApiProperty({ type: [BreakdownRowDto], description: 'At most limit rows, by the sort figure descending, ties by id ascending (the unattributed row after every id); ids with all five figures zero are not listed.' })
  rows: BreakdownRowDto[];

  @ApiProperty({ type: BreakdownFiguresDto, description: 'The figures of every id not listed (zero when every id is listed).' })
  other: BreakdownFiguresDto;
}
