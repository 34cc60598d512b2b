import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { BREAKDOWN_BYS, type BreakdownBy, type BreakdownRow, type ReportBreakdown } from '#libs/contracts';
import { breakdownCsv } from './breakdown-csv.js';
import { FigureProperties, FiguresDto, SPLIT_EXAMPLE_PERIOD, SplitReportDto, SplitReportProperties } from './split-report.dto.js';

/**
 * Response schemas of the breakdown routes for the OpenAPI document (DESIGN §9). They describe
 * the `ReportBreakdown` and `BreakdownRow` interfaces of libs/contracts, which stay the
 * definition (`implements` makes the compiler refuse a class that lacks a field).
 */

/** The top three ads of a 7d period by earnings, the unattributed row among them. */
export const BREAKDOWN_EXAMPLE: ReportBreakdown = {
  agent_id: 'agent_7f3c2a',
  time_range: '7d',
  by: 'ad',
  timezone: 'UTC',
  ...SPLIT_EXAMPLE_PERIOD,
  rows: [
    { id: 'ad_9b1e', exposures: 612, clicks: 80, engagements: 12, conversions: 4, earnings_micros: 21400000 },
    { id: 'ad_03c7', exposures: 455, clicks: 51, engagements: 9, conversions: 2, earnings_micros: 13250000 },
    { id: null, exposures: 38, clicks: 4, engagements: 1, conversions: 0, earnings_micros: 900000 },
  ],
  other: { exposures: 735, clicks: 77, engagements: 11, conversions: 2, earnings_micros: 12700000 },
};

export const BREAKDOWN_CSV_EXAMPLE = breakdownCsv(BREAKDOWN_EXAMPLE);

@ApiSchema({ name: 'BreakdownFigures', description: 'The five figures of the Report, for the ids not listed.' })
@FigureProperties(BREAKDOWN_EXAMPLE.other)
export class BreakdownFiguresDto extends FiguresDto {}

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
@SplitReportProperties(BREAKDOWN_EXAMPLE, {
  split: { by: { type: 'string', enum: BREAKDOWN_BYS, description: 'What the ids are: ad or product.', example: BREAKDOWN_EXAMPLE.by } },
  timezone: 'The platform reporting timezone (where today starts).',
  processedThrough: 'Processing cutoff the breakdown reflects; the Report with the same value has the sums of rows and other as its figures.',
  content: {
    rows: {
      type: [BreakdownRowDto],
      description: 'At most limit rows, by the sort figure descending, ties by id ascending (the unattributed row after every id); ids with all five figures zero are not listed.',
    },
    other: { type: BreakdownFiguresDto, description: 'The figures of every id not listed (zero when every id is listed).' },
  },
})
export class ReportBreakdownDto extends SplitReportDto implements ReportBreakdown {
  by: BreakdownBy;
  rows: BreakdownRowDto[];
  other: BreakdownFiguresDto;
}
