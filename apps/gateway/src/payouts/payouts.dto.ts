import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  PAYOUT_SETUP_STATUSES,
  PAYOUT_STATEMENT_STATUSES,
  PAYOUTS_DEFAULT_PAGE_SIZE,
  PAYOUTS_MAX_PAGE,
  PAYOUTS_MAX_PAGE_SIZE,
  PAYOUTS_RECENT_STATEMENTS,
  type PayoutBalance,
  type PayoutBalancesReply,
  type PayoutFailure,
  type PayoutOverviewReply,
  type PayoutPage,
  type PayoutReadiness,
  type PayoutSetupStatus,
  type PayoutStatement,
  type PayoutStatementStatus,
  type PayoutThreshold,
  type PayoutTransfer,
} from '#libs/contracts';

/**
 * Response schemas of the /agent-payouts/me endpoints for the OpenAPI document (DESIGN §5).
 * They describe the reply interfaces of libs/contracts (payouts-replies.ts), which stay the
 * definition: `implements` makes the compiler refuse a class that lacks a field.
 */

const AGENT = 'agent_7f3c2a';

export const BALANCE_EXAMPLE: PayoutBalance = {
  agent_id: AGENT,
  currency: 'USD',
  pending_micros: 12_500_000,
  available_micros: 48_250_000,
  locked_micros: 30_000_000,
  paid_out_micros: 215_000_000,
  updated_at: '2026-11-25T10:15:42.120Z',
};

export const BALANCES_EXAMPLE: PayoutBalancesReply = { balances: [BALANCE_EXAMPLE] };

export const READINESS_EXAMPLE: PayoutReadiness = {
  agent_id: AGENT,
  setup_status: 'in_progress',
  missing_fields: ['tax_form'],
  thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
  blocked_reason: null,
  updated_at: '2026-11-20T08:00:00.000Z',
};

export const PAID_STATEMENT_EXAMPLE: PayoutStatement = {
  statement_id: 'st_2026_10_agent_7f3c2a',
  agent_id: AGENT,
  period_start: '2026-10-01T00:00:00.000Z',
  period_end: '2026-11-01T00:00:00.000Z',
  currency: 'USD',
  status: 'PAID',
  gross_earnings_micros: 240_000_000,
  service_fee_micros: 24_000_000,
  net_earnings_micros: 216_000_000,
  blocked_reason: null,
  failure: null,
  transfer: {
    transfer_reference: 'tr_8d41e0',
    status: 'settled',
    initiated_at: '2026-11-05T09:00:00.000Z',
    settled_at: '2026-11-07T12:30:00.000Z',
    source_currency: 'USD',
    source_amount_micros: 216_000_000,
    target_currency: 'EUR',
    amount_received_micros: 199_550_000,
    fee_micros: 850_000,
    exchange_rate: '0.9277',
  },
  created_at: '2026-11-01T02:00:00.000Z',
  updated_at: '2026-11-07T12:30:01.000Z',
};

export const BLOCKED_STATEMENT_EXAMPLE: PayoutStatement = {
  statement_id: 'st_2026_11_agent_7f3c2a',
  agent_id: AGENT,
  period_start: '2026-11-01T00:00:00.000Z',
  period_end: '2026-12-01T00:00:00.000Z',
  currency: 'USD',
  status: 'BLOCKED',
  gross_earnings_micros: 80_000_000,
  service_fee_micros: 8_000_000,
  net_earnings_micros: 72_000_000,
  blocked_reason: 'The tax form is missing.',
  failure: null,
  transfer: null,
  created_at: '2026-12-01T02:00:00.000Z',
  updated_at: '2026-12-01T02:00:00.000Z',
};

export const STATEMENT_PAGE_EXAMPLE: PayoutPage<PayoutStatement> = {
  items: [BLOCKED_STATEMENT_EXAMPLE, PAID_STATEMENT_EXAMPLE],
  page: 1,
  page_size: PAYOUTS_DEFAULT_PAGE_SIZE,
  total: 2,
};

export const OVERVIEW_EXAMPLE: PayoutOverviewReply = {
  balances: [BALANCE_EXAMPLE],
  readiness: READINESS_EXAMPLE,
  latest_statement: BLOCKED_STATEMENT_EXAMPLE,
  recent_statements: [BLOCKED_STATEMENT_EXAMPLE, PAID_STATEMENT_EXAMPLE],
};

const TIMESTAMP = { type: 'string', format: 'date-time' } as const;
const MICROS = { type: 'integer', format: 'int64' } as const;
const CURRENCY = { type: 'string', pattern: '^[A-Z]{3}$' } as const;
const AGENT_ID = { type: 'string', description: 'Identifier of the calling platform.', example: AGENT } as const;

@ApiSchema({ name: 'PayoutBalance', description: 'The payout balance of the platform in one currency: four buckets in integer micros.' })
export class PayoutBalanceDto implements PayoutBalance {
  @ApiProperty(AGENT_ID)
  agent_id: string;

  @ApiProperty({ ...CURRENCY, description: 'ISO 4217 currency code of the four buckets.', example: 'USD' })
  currency: string;

  @ApiProperty({ ...MICROS, description: 'Recorded earnings not yet available, in millionths of the currency unit.', example: BALANCE_EXAMPLE.pending_micros })
  pending_micros: number;

  @ApiProperty({
    ...MICROS,
    description:
      'Settled earnings available for payout consideration. Available is not sent: a payout also needs completed setup (readiness), the minimum payout amount and monthly approval.',
    example: BALANCE_EXAMPLE.available_micros,
  })
  available_micros: number;

  @ApiProperty({
    ...MICROS,
    description: 'Earnings reserved for a payout statement, including amounts held in BLOCKED or FAILED payout processing.',
    example: BALANCE_EXAMPLE.locked_micros,
  })
  locked_micros: number;

  @ApiProperty({ ...MICROS, description: 'Earnings recorded as paid.', example: BALANCE_EXAMPLE.paid_out_micros })
  paid_out_micros: number;

  @ApiProperty({ ...TIMESTAMP, description: 'When this balance last changed.', example: BALANCE_EXAMPLE.updated_at })
  updated_at: string;
}

@ApiSchema({ name: 'PayoutBalances', description: 'Every currency of the platform, ordered by currency code (empty when none is known).' })
export class PayoutBalancesDto implements PayoutBalancesReply {
  @ApiProperty({ type: () => [PayoutBalanceDto], description: 'One balance per currency.' })
  balances: PayoutBalanceDto[];
}

@ApiSchema({ name: 'PayoutThreshold', description: 'The minimum payout amount of one currency.' })
export class PayoutThresholdDto implements PayoutThreshold {
  @ApiProperty({ ...CURRENCY, example: 'USD' })
  currency: string;

  @ApiProperty({ ...MICROS, description: 'Minimum payout amount, in millionths of the currency unit.', example: 50_000_000 })
  minimum_payout_micros: number;
}

@ApiSchema({ name: 'PayoutReadiness', description: 'Payout setup of the platform: status, missing fields, thresholds and a blocked reason.' })
export class PayoutReadinessDto implements PayoutReadiness {
  @ApiProperty(AGENT_ID)
  agent_id: string;

  @ApiProperty({
    type: 'string',
    enum: PAYOUT_SETUP_STATUSES,
    description: 'Recipient setup: not_started (also before anything is known), in_progress or complete.',
    example: READINESS_EXAMPLE.setup_status,
  })
  setup_status: PayoutSetupStatus;

  @ApiProperty({ type: 'string', isArray: true, description: 'Setup fields still to complete.', example: READINESS_EXAMPLE.missing_fields })
  missing_fields: string[];

  @ApiProperty({ type: () => [PayoutThresholdDto], description: 'Minimum payout amount per currency.' })
  thresholds: PayoutThresholdDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Why payouts are held, or null.', example: null })
  blocked_reason: string | null;

  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'When the readiness last changed; null while nothing is known (setup_status not_started).', example: READINESS_EXAMPLE.updated_at })
  updated_at: string | null;
}

@ApiSchema({ name: 'PayoutFailure', description: 'Why payout processing failed (FAILED statements).' })
export class PayoutFailureDto implements PayoutFailure {
  @ApiProperty({ type: 'string', description: 'Machine-readable failure code.', example: 'account_closed' })
  code: string;

  @ApiProperty({ type: 'string', description: 'Human-readable explanation.', example: 'The beneficiary account is closed.' })
  message: string;
}

@ApiSchema({
  name: 'PayoutTransfer',
  description:
    'The payment transfer of a statement. The transfer currency can differ from the USD earnings currency: amount_received_micros is in target_currency. ' +
    'amount_received_micros, fee_micros and exchange_rate are given when the transfer provider reports them, else null; never derive one from the others.',
})
export class PayoutTransferDto implements PayoutTransfer {
  @ApiProperty({ type: 'string', description: 'Reference of the transfer at the provider; quote it to support.', example: 'tr_8d41e0' })
  transfer_reference: string;

  @ApiProperty({ type: 'string', description: 'Status of the transfer as the provider reports it (e.g. settled).', example: 'settled' })
  status: string;

  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'When the transfer was initiated, when provided.', example: '2026-11-05T09:00:00.000Z' })
  initiated_at: string | null;

  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'When the transfer settled, when provided.', example: '2026-11-07T12:30:00.000Z' })
  settled_at: string | null;

  @ApiProperty({ ...CURRENCY, description: 'Currency the transfer was sent from.', example: 'USD' })
  source_currency: string;

  @ApiProperty({ ...MICROS, nullable: true, description: 'Amount sent, in source_currency micros, when provided.', example: 216_000_000 })
  source_amount_micros: number | null;

  @ApiProperty({ ...CURRENCY, nullable: true, description: 'Currency the beneficiary received, when provided; may differ from USD.', example: 'EUR' })
  target_currency: string | null;

  @ApiProperty({ ...MICROS, nullable: true, description: 'Amount the beneficiary received, in target_currency micros, when provided.', example: 199_550_000 })
  amount_received_micros: number | null;

  @ApiProperty({ ...MICROS, nullable: true, description: 'Transfer fees, in source_currency micros, when provided.', example: 850_000 })
  fee_micros: number | null;

  @ApiProperty({
    oneOf: [{ type: 'string', pattern: '^\\d+(\\.\\d+)?$' }, { type: 'number' }],
    nullable: true,
    description: 'Exchange rate source → target, when provided: returned exactly as the provider reported it (a decimal string or a number).',
    example: '0.9277',
  })
  exchange_rate: number | string | null;
}

@ApiSchema({ name: 'PayoutStatement', description: 'A monthly payout statement of the platform, with its transfer.' })
export class PayoutStatementDto implements PayoutStatement {
  @ApiProperty({ type: 'string', description: 'Identifier of the statement.', example: PAID_STATEMENT_EXAMPLE.statement_id })
  statement_id: string;

  @ApiProperty(AGENT_ID)
  agent_id: string;

  @ApiProperty({ ...TIMESTAMP, description: 'Inclusive start of the statement period.', example: PAID_STATEMENT_EXAMPLE.period_start })
  period_start: string;

  @ApiProperty({ ...TIMESTAMP, description: 'End of the statement period.', example: PAID_STATEMENT_EXAMPLE.period_end })
  period_end: string;

  @ApiProperty({ ...CURRENCY, description: 'Earnings currency of the money fields (USD).', example: 'USD' })
  currency: string;

  @ApiProperty({
    type: 'string',
    enum: PAYOUT_STATEMENT_STATUSES,
    description:
      'LOCKED: earnings reserved for payout processing (does not confirm payment). BLOCKED: a requirement or hold needs attention (blocked_reason). ' +
      'FAILED: processing failed (failure). PAID: recorded as paid (transfer with reference and settlement details).',
    example: 'PAID',
  })
  status: PayoutStatementStatus;

  @ApiProperty({ ...MICROS, nullable: true, description: 'Gross earnings of the period, when provided.', example: PAID_STATEMENT_EXAMPLE.gross_earnings_micros })
  gross_earnings_micros: number | null;

  @ApiProperty({ ...MICROS, nullable: true, description: 'Service fee, when provided.', example: PAID_STATEMENT_EXAMPLE.service_fee_micros })
  service_fee_micros: number | null;

  @ApiProperty({ ...MICROS, nullable: true, description: 'Net earnings (gross minus fee), when provided.', example: PAID_STATEMENT_EXAMPLE.net_earnings_micros })
  net_earnings_micros: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'What needs attention, when BLOCKED; else null.', example: null })
  blocked_reason: string | null;

  @ApiProperty({ type: () => PayoutFailureDto, nullable: true, description: 'Failure details when FAILED; else null.' })
  failure: PayoutFailureDto | null;

  @ApiProperty({ type: () => PayoutTransferDto, nullable: true, description: 'The associated transfer (reference and settlement details when PAID), or null when none exists yet.' })
  transfer: PayoutTransferDto | null;

  @ApiProperty({ ...TIMESTAMP, description: 'When the statement was created.', example: PAID_STATEMENT_EXAMPLE.created_at })
  created_at: string;

  @ApiProperty({ ...TIMESTAMP, description: 'When the statement last changed.', example: PAID_STATEMENT_EXAMPLE.updated_at })
  updated_at: string;
}

@ApiSchema({
  name: 'PayoutStatementPage',
  description: 'One page of statements, newest period first. A page beyond the end has no items; total counts every matching statement.',
})
export class PayoutStatementPageDto implements PayoutPage<PayoutStatement> {
  @ApiProperty({ type: () => [PayoutStatementDto], description: 'The statements of the page.' })
  items: PayoutStatementDto[];

  @ApiProperty({ type: 'integer', minimum: 1, maximum: PAYOUTS_MAX_PAGE, description: 'The page (1 unless asked).', example: 1 })
  page: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: PAYOUTS_MAX_PAGE_SIZE, description: `Statements per page (${PAYOUTS_DEFAULT_PAGE_SIZE} unless asked).`, example: PAYOUTS_DEFAULT_PAGE_SIZE })
  page_size: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Statements matching the request, over all pages.', example: 2 })
  total: number;
}

@ApiSchema({ name: 'PayoutOverview', description: 'Balances, readiness, latest statement and recent statements in one answer.' })
export class PayoutOverviewDto implements PayoutOverviewReply {
  @ApiProperty({ type: () => [PayoutBalanceDto], description: 'Every currency of the platform, by currency code.' })
  balances: PayoutBalanceDto[];

  @ApiProperty({ type: () => PayoutReadinessDto, description: 'Payout setup of the platform.' })
  readiness: PayoutReadinessDto;

  @ApiProperty({ type: () => PayoutStatementDto, nullable: true, description: 'The newest statement (by period), or null when there is none.' })
  latest_statement: PayoutStatementDto | null;

  @ApiProperty({ type: () => [PayoutStatementDto], description: `The ${PAYOUTS_RECENT_STATEMENTS} newest statements of any status, newest period first.` })
  recent_statements: PayoutStatementDto[];
}
