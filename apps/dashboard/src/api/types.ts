/**
 * The API's bodies as the dashboard reads them. Reports and payout records are the contract
 * types of #libs/contracts (type-only imports: nothing of the server's code enters the bundle);
 * the owner API's shapes (keys, series: DESIGN §7) are written out here from the contract.
 */
import type {
  PayoutBalance,
  PayoutBalancesReply,
  PayoutOverviewReply,
  PayoutPage,
  PayoutReadiness,
  PayoutStatement,
  PayoutTransfer,
  PreparingReport,
  Report,
  TimeRange as ContractTimeRange,
} from '#libs/contracts';
import type { Granularity, TimeRange } from '../routing/routes.js';

export type { PayoutBalance, PayoutBalancesReply, PayoutOverviewReply, PayoutPage, PayoutReadiness, PayoutStatement, PayoutTransfer, PreparingReport, Report };

/** The dashboard's ranges are exactly the contract's (a compile-time check both ways). */
export type SameRanges = [TimeRange] extends [ContractTimeRange] ? ([ContractTimeRange] extends [TimeRange] ? true : never) : never;
export const RANGES_MATCH_CONTRACT: SameRanges = true;

/** GET /agent/keys item (DESIGN §7). */
export interface ApiKey {
  key_id: string;
  /** null for keys made by the ops CLI. */
  name: string | null;
  mode: 'live' | 'test';
  last4: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface ApiKeyList {
  items: ApiKey[];
}

/** POST /agent/keys → 201: the only time the secret is shown. */
export interface CreatedApiKey {
  key_id: string;
  api_key: string;
  name: string;
  mode: 'live' | 'test';
  created_at: string;
}

export interface SeriesBucket {
  start_at: string;
  end_at: string;
  exposures: number;
  clicks: number;
  engagements: number;
  conversions: number;
  earnings_micros: number;
}

/** GET /agent/dashboard/reporting/series → 200 (DESIGN §7). */
export interface ReportSeries {
  agent_id: string;
  time_range: TimeRange;
  granularity: Granularity;
  timezone: string;
  is_test: boolean;
  start_at: string | null;
  end_at: string;
  processed_through: string;
  status: 'ready' | 'stale';
  currency: string;
  buckets: SeriesBucket[];
}

/** PATCH /agent/update-onboarding → 200 (DESIGN §5). */
export interface OnboardingUpdate {
  agent_id: string;
  reporting_timezone: string;
  updated_at: string;
}
