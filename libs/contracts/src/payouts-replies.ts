import type { PayoutSetupStatus, PayoutStatementStatus } from './payouts.constants.js';

// The replies of payouts-read (DESIGN §5 "Payouts").

/** Records use the event field names without `version`; money is integer micros. */
export interface PayoutBalance {
  agent_id: string;
  currency: string;
  pending_micros: number;
  available_micros: number;
  locked_micros: number;
  paid_out_micros: number;
  updated_at: string;
}

export interface PayoutThreshold {
  currency: string;
  minimum_payout_micros: number;
}

export interface PayoutReadiness {
  agent_id: string;
  setup_status: PayoutSetupStatus;
  missing_fields: string[];
  thresholds: PayoutThreshold[];
  blocked_reason: string | null;
  /** null: no readiness event is known yet for the platform (setup_status not_started). */
  updated_at: string | null;
}

export interface PayoutFailure {
  code: string;
  message: string;
}

export interface PayoutTransfer {
  transfer_reference: string;
  status: string;
  initiated_at: string | null;
  settled_at: string | null;
  source_currency: string;
  source_amount_micros: number | null;
  target_currency: string | null;
  amount_received_micros: number | null;
  fee_micros: number | null;
  exchange_rate: number | string | null;
}

export interface PayoutStatement {
  statement_id: string;
  agent_id: string;
  period_start: string;
  period_end: string;
  currency: string;
  status: PayoutStatementStatus;
  gross_earnings_micros: number | null;
  service_fee_micros: number | null;
  net_earnings_micros: number | null;
  blocked_reason: string | null;
  failure: PayoutFailure | null;
  transfer: PayoutTransfer | null;
  created_at: string;
  updated_at: string;
}

/** Reply of `payouts.v1.balance.get`: every currency of the platform, by currency code. */
export interface PayoutBalancesReply {
  balances: PayoutBalance[];
}

export interface PayoutPage<T> {
  items: T[];
  page: number;
  page_size: number;
  total: number;
}

export interface PayoutOverviewReply {
  balances: PayoutBalance[];
  readiness: PayoutReadiness;
  latest_statement: PayoutStatement | null;
  recent_statements: PayoutStatement[];
}
