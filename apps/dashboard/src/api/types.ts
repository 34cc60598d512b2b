/**
 * The API's bodies as the dashboard reads them. Reports, report series and payout records are
 * the contract types of #libs/contracts (type-only imports: nothing of the server's code enters
 * the bundle); the key shapes (DESIGN §7), which live in the gateway's DTOs, are written out here.
 */
export type {
  PayoutBalance,
  PayoutBalancesReply,
  PayoutOverviewReply,
  PayoutPage,
  PayoutReadiness,
  PayoutStatement,
  PayoutTransfer,
  PreparingReport,
  Report,
  ReportBreakdown,
  ReportSeries,
  SeriesBucket,
} from '#libs/contracts';
import type { SeriesGranularity, TimeRange as ContractTimeRange } from '#libs/contracts';
import type { Granularity, TimeRange } from '../routing/routes.js';

/** The dashboard's ranges are exactly the contract's (a compile-time check both ways). */
export type SameRanges = [TimeRange] extends [ContractTimeRange] ? ([ContractTimeRange] extends [TimeRange] ? true : never) : never;
export const RANGES_MATCH_CONTRACT: SameRanges = true;
/** And so are its bucket sizes. */
export type SameGranularities = [Granularity] extends [SeriesGranularity] ? ([SeriesGranularity] extends [Granularity] ? true : never) : never;
export const GRANULARITIES_MATCH_CONTRACT: SameGranularities = true;

/** GET /agent/keys item (DESIGN §7). */
export interface ApiKey {
  key_id: string;
  /** null for keys made by the ops CLI. */
  name: string | null;
  mode: 'live' | 'test';
  /** null for a key made before last4 was kept, until its next use fills it in (DESIGN §7). */
  last4: string | null;
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

/** PATCH /agent/update-onboarding → 200 (DESIGN §5). */
export interface OnboardingUpdate {
  agent_id: string;
  reporting_timezone: string;
  updated_at: string;
}
