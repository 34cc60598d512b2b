import { ArrayMaxSize, IsArray, IsIn, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { PAYOUT_SETUP_STATUSES, PAYOUT_STATEMENT_STATUSES, type PayoutSetupStatus, type PayoutStatementStatus } from './payouts.constants.js';
import { CURRENCY, CURRENCY_MESSAGE, IsExchangeRate, IsNestedDto, IsVersion, isNullish } from './payouts.validators.js';
import { IsSafeInteger, IsUtcTimestamp } from './validators.js';

/**
 * The `events.payouts.*` payloads (DESIGN §4 "Payout read model").
 *
 * Nullable fields ("where provided") accept `null` or an absent key (read as null); every other
 * field is required. Unknown extra fields of an event are ignored (not stored), so producers may
 * add fields before consumers know them.
 */

/** Payload of `events.payouts.balance`: one platform's balance in one currency. */
export class PayoutBalanceEventDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsString() @Matches(CURRENCY, { message: CURRENCY_MESSAGE('currency') })
  currency: string;

  @IsSafeInteger()
  pending_micros: number;

  @IsSafeInteger()
  available_micros: number;

  @IsSafeInteger()
  locked_micros: number;

  @IsSafeInteger()
  paid_out_micros: number;

  @IsUtcTimestamp()
  updated_at: string;

  @IsVersion()
  version: number;
}

export class PayoutThresholdDto {
  @IsString() @Matches(CURRENCY, { message: CURRENCY_MESSAGE('currency') })
  currency: string;

  @IsSafeInteger()
  minimum_payout_micros: number;
}

/** Payload of `events.payouts.readiness`: one platform's payout setup. */
export class PayoutReadinessEventDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIn(PAYOUT_SETUP_STATUSES)
  setup_status: PayoutSetupStatus;

  @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) @MaxLength(200, { each: true })
  missing_fields: string[];

  @IsArray() @ArrayMaxSize(100) @IsNestedDto(() => PayoutThresholdDto, true)
  thresholds: PayoutThresholdDto[];

  @ValidateIf((_, value) => !isNullish(value)) @IsString() @MaxLength(2000)
  blocked_reason?: string | null;

  @IsUtcTimestamp()
  updated_at: string;

  @IsVersion()
  version: number;
}

export class PayoutFailureDto {
  @IsString() @MinLength(1) @MaxLength(200)
  code: string;

  @IsString() @MaxLength(2000)
  message: string;
}

export class PayoutTransferDto {
  @IsString() @MinLength(1) @MaxLength(200)
  transfer_reference: string;

  @IsString() @MinLength(1) @MaxLength(100)
  status: string;

  @ValidateIf((_, value) => !isNullish(value)) @IsUtcTimestamp()
  initiated_at?: string | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsUtcTimestamp()
  settled_at?: string | null;

  @IsString() @Matches(CURRENCY, { message: CURRENCY_MESSAGE('source_currency') })
  source_currency: string;

  @ValidateIf((_, value) => !isNullish(value)) @IsSafeInteger()
  source_amount_micros?: number | null;

  /** May differ from the USD earnings currency (SPEC "Transfer"). */
  @ValidateIf((_, value) => !isNullish(value)) @IsString() @Matches(CURRENCY, { message: CURRENCY_MESSAGE('target_currency') })
  target_currency?: string | null;

  /** Amount the beneficiary received, in target_currency, when provided. */
  @ValidateIf((_, value) => !isNullish(value)) @IsSafeInteger()
  amount_received_micros?: number | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsSafeInteger()
  fee_micros?: number | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsExchangeRate()
  exchange_rate?: number | string | null;
}

/** Payload of `events.payouts.statement`: one payout statement with its transfer. */
export class PayoutStatementEventDto {
  @IsString() @MinLength(1) @MaxLength(200)
  statement_id: string;

  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsUtcTimestamp()
  period_start: string;

  @IsUtcTimestamp()
  period_end: string;

  @IsString() @Matches(CURRENCY, { message: CURRENCY_MESSAGE('currency') })
  currency: string;

  @IsIn(PAYOUT_STATEMENT_STATUSES)
  status: PayoutStatementStatus;

  @ValidateIf((_, value) => !isNullish(value)) @IsSafeInteger()
  gross_earnings_micros?: number | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsSafeInteger()
  service_fee_micros?: number | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsSafeInteger()
  net_earnings_micros?: number | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsString() @MaxLength(2000)
  blocked_reason?: string | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsNestedDto(() => PayoutFailureDto)
  failure?: PayoutFailureDto | null;

  @ValidateIf((_, value) => !isNullish(value)) @IsNestedDto(() => PayoutTransferDto)
  transfer?: PayoutTransferDto | null;

  @IsUtcTimestamp()
  created_at: string;

  @IsUtcTimestamp()
  updated_at: string;

  @IsVersion()
  version: number;
}
