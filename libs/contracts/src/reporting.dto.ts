import { IsIn, IsString, MaxLength, MinLength } from 'class-validator';
import { FastCheck } from './fast-check.js';
import { passesReportRequestFastCheck } from './fast-validation.js';
import { TRAFFICS, type Traffic } from './recommendation-event.dto.js';

export const TIME_RANGES = ['today', '1d', '7d', '30d', '90d', 'all'] as const;
export type TimeRange = (typeof TIME_RANGES)[number];
export const DEFAULT_TIME_RANGE: TimeRange = '30d';

export const REPORT_SCHEMA_VERSION = 1;
export const REPORT_CURRENCY = 'USD';
/** Earnings are the sum of recorded accounting entries, never estimates from bids (SPEC rule 5). */
export const EARNINGS_BASIS = 'recorded_accounting_entries';
export const EARNINGS_ADAPTER_VERSION = 'accounting-v1';

export type ReportStatus = 'preparing' | 'ready' | 'stale';
export type EarningsCoverage = 'complete' | 'partial' | 'unavailable';

/** Request of `reporting.v1.report.get`: the gateway has already authenticated the key. */
@FastCheck(passesReportRequestFastCheck)
export class ReportRequestDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIn(TRAFFICS)
  traffic: Traffic;

  @IsIn(TIME_RANGES)
  time_range: TimeRange;
}

/** The Report of SPEC "Resources and their fields", as served with HTTP 200. */
export interface Report {
  agent_id: string;
  time_range: TimeRange;
  start_at: string | null;
  end_at: string;
  currency: string;
  is_test: boolean;
  report_schema_version: number;
  earnings_basis: string;
  status: 'ready' | 'stale';
  earnings_coverage: EarningsCoverage;
  processed_through: string;
  updated_at: string;
  accounting_reconciled_through: string | null;
  timezone: string;
  exposures: number;
  clicks: number;
  engagements: number;
  conversions: number;
  earnings_micros: number;
  earnings_excluded_recommendations: number;
  pending_earnings_recommendations: number;
  accounting_review_required: number;
  earnings_adapter_version: string;
}

/** The eight figures of a Report that count recommendations and money (SPEC "Counting rules"). */
export const REPORT_COUNTERS = [
  'exposures',
  'clicks',
  'engagements',
  'conversions',
  'earnings_micros',
  'earnings_excluded_recommendations',
  'pending_earnings_recommendations',
  'accounting_review_required',
] as const;
export type ReportCounters = Pick<Report, (typeof REPORT_COUNTERS)[number]>;

/** Body of the HTTP 202 while the first snapshot of a scope is prepared (DESIGN §5). */
export interface PreparingReport {
  status: 'preparing';
  agent_id: string;
  time_range: TimeRange;
  is_test: boolean;
  report_schema_version: number;
}

export type ReportReply = Report | PreparingReport;
