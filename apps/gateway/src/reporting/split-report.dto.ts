import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { REPORT_CURRENCY, TIME_RANGES, type ReportSeries, type SeriesFigures } from '#libs/contracts';

/**
 * What the response schemas of the series (DESIGN §7) and the breakdown (DESIGN §9) share: the
 * five figures of the Report, and the scope, period and cutoff of the Report they split. The
 * fields are declared once here; a class decorator documents them for each schema, with that
 * schema's example and in the order of the OpenAPI document (a class decorator runs after the
 * class's own property decorators).
 */

/** The 7d period of live traffic that the examples of the series and the breakdown split: their fields after timezone. */
export const SPLIT_EXAMPLE_PERIOD = {
  is_test: false,
  start_at: '2026-11-18T10:00:00.000Z',
  end_at: '2026-11-25T10:00:00.000Z',
  processed_through: '2026-11-25T10:00:00.000Z',
  status: 'ready',
  currency: REPORT_CURRENCY,
} as const;

export const TIMESTAMP = { type: 'string', format: 'date-time' } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;

/** Documents properties of `target`'s schema, in this order. */
function documentProperties(target: object, properties: Record<string, ApiPropertyOptions>): void {
  for (const [name, options] of Object.entries(properties)) ApiProperty(options)((target as { prototype: object }).prototype, name);
}

/** The five figures of the Report (a bucket, a row, other). */
export abstract class FiguresDto implements SeriesFigures {
  exposures: number;
  clicks: number;
  engagements: number;
  conversions: number;
  earnings_micros: number;
}

/** Documents the five figures, after the class's own properties, with the values of `example`. */
export function FigureProperties(example: SeriesFigures): ClassDecorator {
  return (target) =>
    documentProperties(target, {
      exposures: { ...COUNT, description: 'Unique recommendations shown.', example: example.exposures },
      clicks: { ...COUNT, description: 'Recommendations currently marked clicked, engaged or converted.', example: example.clicks },
      engagements: { ...COUNT, description: 'Recommendations currently marked engaged.', example: example.engagements },
      conversions: { ...COUNT, description: 'Recommendations currently marked converted.', example: example.conversions },
      earnings_micros: { type: 'integer', format: 'int64', description: 'Recorded net earnings in micros (may be negative after reversals).', example: example.earnings_micros },
    });
}

/**
 * The scope, period and cutoff of the Report a series or a breakdown splits: the fields of
 * ReportSeries but its split and buckets, as the contract declares them (typed only; the
 * schema's properties come from SplitReportProperties).
 */
export const SplitReportDto = class SplitReportDto {} as unknown as abstract new () => Omit<ReportSeries, 'granularity' | 'buckets'>;

type SplitExample = Pick<ReportSeries, 'agent_id' | 'time_range' | 'timezone' | 'start_at' | 'end_at' | 'processed_through' | 'status'>;

/**
 * Documents a split of the report: agent_id and time_range, then `split` (what splits it:
 * granularity, by), the period and cutoff (their descriptions of timezone and processed_through
 * given), then `content` (buckets; rows and other).
 */
export function SplitReportProperties(example: SplitExample, described: { split: Record<string, ApiPropertyOptions>; timezone: string; processedThrough: string; content: Record<string, ApiPropertyOptions> }): ClassDecorator {
  return (target) =>
    documentProperties(target, {
      agent_id: { type: 'string', description: 'Identifier of the platform.', example: example.agent_id },
      time_range: { type: 'string', enum: TIME_RANGES, description: 'The period requested.', example: example.time_range },
      ...described.split,
      timezone: { type: 'string', description: described.timezone, example: example.timezone },
      is_test: { type: 'boolean', description: 'true for test traffic, false for live traffic.', example: false },
      start_at: { ...TIMESTAMP, nullable: true, description: 'Inclusive start of the period (UTC), as in the Report; null for all.', example: example.start_at },
      end_at: { ...TIMESTAMP, description: 'Exclusive end of the period (UTC), as in the Report.', example: example.end_at },
      processed_through: { ...TIMESTAMP, description: described.processedThrough, example: example.processed_through },
      status: { type: 'string', enum: ['ready', 'stale'], description: 'As in the Report: stale when more than two minutes behind the processing cutoff.', example: example.status },
      currency: { type: 'string', description: 'Currency of earnings_micros.', example: REPORT_CURRENCY },
      ...described.content,
    });
}
