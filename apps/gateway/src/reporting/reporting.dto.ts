import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  DEFAULT_TIME_RANGE,
  EARNINGS_ADAPTER_VERSION,
  EARNINGS_BASIS,
  REPORT_CURRENCY,
  REPORT_SCHEMA_VERSION,
  TIME_RANGES,
  type EarningsCoverage,
  type PreparingReport,
  type Report,
  type TimeRange,
} from '#libs/contracts';

/**
 * Response schemas of GET /agent/reporting for the OpenAPI document (DESIGN §5). They describe
 * the `Report` and `PreparingReport` interfaces of libs/contracts, which stay the definition:
 * `implements` makes the compiler refuse a class that lacks a field, and
 * test/unit/gateway-openapi.spec.ts fails when a field is declared here without its schema.
 */

export const EARNINGS_COVERAGES: readonly EarningsCoverage[] = ['complete', 'partial', 'unavailable'];

/** A complete report, as the 200 example of the document. */
export const REPORT_EXAMPLE: Report = {
  agent_id: 'agent_7f3c2a',
  time_range: '7d',
  start_at: '2026-11-18T10:00:00.000Z',
  end_at: '2026-11-25T10:00:00.000Z',
  currency: REPORT_CURRENCY,
  is_test: false,
  report_schema_version: REPORT_SCHEMA_VERSION,
  earnings_basis: EARNINGS_BASIS,
  status: 'ready',
  earnings_coverage: 'partial',
  processed_through: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:04.512Z',
  accounting_reconciled_through: '2026-11-25T06:00:00.000Z',
  timezone: 'UTC',
  exposures: 1840,
  clicks: 212,
  engagements: 37,
  conversions: 9,
  earnings_micros: 48250000,
  earnings_excluded_recommendations: 2,
  pending_earnings_recommendations: 5,
  accounting_review_required: 0,
  earnings_adapter_version: EARNINGS_ADAPTER_VERSION,
};

/** The 202 body while the first report of a scope is prepared. */
export const PREPARING_EXAMPLE: PreparingReport = {
  status: 'preparing',
  agent_id: 'agent_7f3c2a',
  time_range: DEFAULT_TIME_RANGE,
  is_test: false,
  report_schema_version: REPORT_SCHEMA_VERSION,
};

const TIMESTAMP = { type: 'string', format: 'date-time' } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;

@ApiSchema({ name: 'Report', description: 'Performance totals of the calling platform over the requested period (HTTP 200).' })
export class ReportDto implements Report {
  @ApiProperty({ type: 'string', description: 'Identifier of the calling platform.', example: REPORT_EXAMPLE.agent_id })
  agent_id: string;

  @ApiProperty({ type: 'string', enum: TIME_RANGES, description: 'The period requested.', example: REPORT_EXAMPLE.time_range })
  time_range: TimeRange;

  @ApiProperty({
    ...TIMESTAMP,
    nullable: true,
    description: 'Inclusive start of the actual period (ISO 8601, UTC). null when time_range is all.',
    example: REPORT_EXAMPLE.start_at,
  })
  start_at: string | null;

  @ApiProperty({ ...TIMESTAMP, description: 'Exclusive end of the actual period (ISO 8601, UTC).', example: REPORT_EXAMPLE.end_at })
  end_at: string;

  @ApiProperty({ type: 'string', description: 'Currency code of the earnings figure; earnings are expressed in USD.', example: REPORT_CURRENCY })
  currency: string;

  @ApiProperty({ type: 'boolean', description: 'true for test traffic and recorded test earnings (test key); false for live traffic.', example: false })
  is_test: boolean;

  @ApiProperty({ type: 'integer', description: 'Version number of the report layout.', example: REPORT_SCHEMA_VERSION })
  report_schema_version: number;

  @ApiProperty({ type: 'string', description: 'Basis on which earnings are computed.', example: EARNINGS_BASIS })
  earnings_basis: string;

  @ApiProperty({
    type: 'string',
    enum: ['ready', 'stale'],
    description:
      'ready, or stale when the report is more than two minutes behind the processing cutoff (check processed_through and updated_at before showing numbers as current). preparing is answered with HTTP 202 instead.',
    example: REPORT_EXAMPLE.status,
  })
  status: 'ready' | 'stale';

  @ApiProperty({
    type: 'string',
    enum: EARNINGS_COVERAGES,
    description:
      'complete when accounting reconciliation has reached the end of the period and nothing is pending or under review; unavailable when no reconciliation is known; partial otherwise. Independent of status.',
    example: REPORT_EXAMPLE.earnings_coverage,
  })
  earnings_coverage: EarningsCoverage;

  @ApiProperty({ ...TIMESTAMP, description: 'Processing cutoff the report reflects.', example: REPORT_EXAMPLE.processed_through })
  processed_through: string;

  @ApiProperty({ ...TIMESTAMP, description: 'When the report was last produced.', example: REPORT_EXAMPLE.updated_at })
  updated_at: string;

  @ApiProperty({
    ...TIMESTAMP,
    nullable: true,
    description: 'Accounting reconciliation watermark; null when no completed reconciliation is known.',
    example: REPORT_EXAMPLE.accounting_reconciled_through,
  })
  accounting_reconciled_through: string | null;

  @ApiProperty({
    type: 'string',
    description: 'IANA timezone used for the period (the platform reporting timezone; UTC unless the platform set another).',
    example: 'UTC',
  })
  timezone: string;

  @ApiProperty({ ...COUNT, description: 'Unique recommendations shown.', example: REPORT_EXAMPLE.exposures })
  exposures: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations currently marked clicked, engaged or converted.', example: REPORT_EXAMPLE.clicks })
  clicks: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations currently marked engaged.', example: REPORT_EXAMPLE.engagements })
  engagements: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations currently marked converted.', example: REPORT_EXAMPLE.conversions })
  conversions: number;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description:
      'Recorded net earnings from accounting, in millionths of the currency unit (divide by 1,000,000 for major units). Never estimated; may include unsettled amounts and is not a payout balance.',
    example: REPORT_EXAMPLE.earnings_micros,
  })
  earnings_micros: number;

  @ApiProperty({
    ...COUNT,
    description:
      'Recommendations whose earnings were excluded because their currency is foreign or unresolved; their activity stays in the counts.',
    example: REPORT_EXAMPLE.earnings_excluded_recommendations,
  })
  earnings_excluded_recommendations: number;

  @ApiProperty({ ...COUNT, description: 'Recommendations whose activity awaits accounting records.', example: REPORT_EXAMPLE.pending_earnings_recommendations })
  pending_earnings_recommendations: number;

  @ApiProperty({ ...COUNT, description: 'Accounting rows that cannot be attributed.', example: REPORT_EXAMPLE.accounting_review_required })
  accounting_review_required: number;

  @ApiProperty({ type: 'string', description: 'Identifier of the earnings computation version.', example: EARNINGS_ADAPTER_VERSION })
  earnings_adapter_version: string;
}

@ApiSchema({
  name: 'PreparingReport',
  description: 'Answered with HTTP 202 and Retry-After while the first report of the scope is prepared: metadata only, no totals.',
})
export class PreparingReportDto implements PreparingReport {
  @ApiProperty({ type: 'string', enum: ['preparing'], description: 'Always preparing.', example: 'preparing' })
  status: 'preparing';

  @ApiProperty({ type: 'string', description: 'Identifier of the calling platform.', example: PREPARING_EXAMPLE.agent_id })
  agent_id: string;

  @ApiProperty({ type: 'string', enum: TIME_RANGES, description: 'The period requested.', example: PREPARING_EXAMPLE.time_range })
  time_range: TimeRange;

  @ApiProperty({ type: 'boolean', description: 'true for a test key, false for a live key.', example: false })
  is_test: boolean;

  @ApiProperty({ type: 'integer', description: 'Version number of the report layout.', example: REPORT_SCHEMA_VERSION })
  report_schema_version: number;
}
