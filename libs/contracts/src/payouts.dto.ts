import { plainToInstance } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
  registerDecorator,
  validateSync,
  type ValidationOptions,
} from 'class-validator';
import { IsSafeInteger, IsUtcTimestamp } from './validators.js';

/**
 * Payout read model contracts (issue 4, DESIGN §4 "Payout read model" and §5 "Payouts"):
 * the `events.payouts.*` payloads and the request/reply DTOs of payouts-read.
 *
 * Nullable fields ("where provided") accept `null` or an absent key (read as null); every other
 * field is required. Unknown extra fields of an event are ignored (not stored), so producers may
 * add fields before consumers know them.
 */

/** The one filter subject of the payouts-read durable (nats-server 2.9: a single filter). */
export const PAYOUT_EVENTS_FILTER = 'events.payouts.>';

export const PAYOUT_SETUP_STATUSES = ['not_started', 'in_progress', 'complete'] as const;
export type PayoutSetupStatus = (typeof PAYOUT_SETUP_STATUSES)[number];

export const PAYOUT_STATEMENT_STATUSES = ['LOCKED', 'BLOCKED', 'FAILED', 'PAID'] as const;
export type PayoutStatementStatus = (typeof PAYOUT_STATEMENT_STATUSES)[number];

/** Statuses listed by `/history` (SPEC: locked, blocked, failed and paid statements). */
export const PAYOUT_HISTORY_STATUSES: readonly PayoutStatementStatus[] = ['LOCKED', 'BLOCKED', 'FAILED', 'PAID'];

export const PAYOUTS_DEFAULT_PAGE = 1;
export const PAYOUTS_DEFAULT_PAGE_SIZE = 20;
export const PAYOUTS_MAX_PAGE_SIZE = 100;
/** Statements in `/overview`'s `recent_statements`, newest period first. */
export const PAYOUTS_RECENT_STATEMENTS = 5;

const CURRENCY = /^[A-Z]{3}$/;
const CURRENCY_MESSAGE = (property: string) => `${property} must be an ISO 4217 code (three capital letters)`;
const isNullish = (value: unknown) => value === null || value === undefined;

/** A record version: an integer ≥ 0 that a PostgreSQL bigint and a JavaScript number both hold. */
function IsVersion(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isVersion',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be a non-negative integer`, ...options },
      validator: { validate: (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0 },
    });
}

/** An exchange rate: a positive finite number, or a decimal string (exact, e.g. "0.9231"). */
function IsExchangeRate(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isExchangeRate',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be a positive number or decimal string, or null`, ...options },
      validator: {
        validate: (value: unknown) =>
          (typeof value === 'number' && Number.isFinite(value) && value > 0) ||
          (typeof value === 'string' && /^\d{1,18}(\.\d{1,18})?$/.test(value) && Number(value) > 0),
      },
    });
}

/**
 * page / page_size: a JSON integer, or the decimal digits of one as a query string carries them
 * (so the gateway may pass query values through and let this DTO be the single validator).
 */
function IsPageNumber(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isPageNumber',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be an integer from ${min} to ${max}`, ...options },
      validator: { validate: (value: unknown) => toPageNumber(value, min, max) !== undefined },
    });
}

function toPageNumber(value: unknown, min: number, max: number): number | undefined {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\d{1,16}$/.test(value)) n = Number(value);
  else return undefined;
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The problems of a nested object (or of each element of an array) against its DTO, as full paths. */
function nestedProblems(dto: new () => object, value: unknown, array: boolean, path: string): string[] {
  const items = array ? value : [value];
  if (!Array.isArray(items)) return [`${path} must be an array`];
  return items.flatMap((item, i) => {
    const where = array ? `${path}[${i}]` : path;
    if (!isPlainObject(item)) return [`${where} must be an object`];
    return validateSync(plainToInstance(dto, item), { forbidUnknownValues: false })
      .flatMap((e) => Object.values(e.constraints ?? { [e.property]: `${e.property} is invalid` }))
      .map((text) => `${where}.${text}`);
  });
}

/**
 * Validates a nested object (or array of them) against its DTO. Unlike ValidateNested + @Type,
 * it needs no reflect-metadata at decoration time, so importing the contracts stays free of it.
 */
function IsNestedDto(dto: () => new () => object, array = false, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isNestedDto',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => nestedProblems(dto(), value, array, String(propertyName)).length === 0,
        defaultMessage: (args) => nestedProblems(dto(), args?.value, array, String(propertyName)).join('; '),
      },
    });
}

// ───────────────────────────── events (DESIGN §4) ─────────────────────────────

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

// ─────────────────────── request/reply (payouts.v1.*) ───────────────────────

/**
 * Every request names the caller's platform: the gateway passes the authenticated platform, and
 * payouts-read scopes every query by it. Unknown keys are refused (invalid_request).
 */
export class PayoutsAgentRequestDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;
}

/** `payouts.v1.history.list`. page ≥ 1 (default 1), page_size 1–100 (default 20). */
export class PayoutHistoryListRequestDto extends PayoutsAgentRequestDto {
  @IsOptional() @IsPageNumber(1, Number.MAX_SAFE_INTEGER)
  page?: number | string;

  @IsOptional() @IsPageNumber(1, PAYOUTS_MAX_PAGE_SIZE)
  page_size?: number | string;
}

/** `payouts.v1.statements.list`: as history, with an optional status filter. */
export class PayoutStatementsListRequestDto extends PayoutHistoryListRequestDto {
  @IsOptional() @IsIn(PAYOUT_STATEMENT_STATUSES)
  status?: PayoutStatementStatus;
}

/** `payouts.v1.statement.get`: one of the caller's statements; anything else is not_found. */
export class PayoutStatementGetRequestDto extends PayoutsAgentRequestDto {
  @IsString() @MinLength(1) @MaxLength(200)
  statement_id: string;
}

/** The page and page_size of a validated list request, defaults applied. */
export function pageOf(request: { page?: number | string; page_size?: number | string }): { page: number; pageSize: number } {
  return {
    page: request.page == null ? PAYOUTS_DEFAULT_PAGE : Number(request.page),
    pageSize: request.page_size == null ? PAYOUTS_DEFAULT_PAGE_SIZE : Number(request.page_size),
  };
}

// Hot-path pre-checks of the request DTOs (see fast-validation.ts): each accepts only what its
// DTO accepts with whitelist + forbidNonWhitelisted (a property test holds them to that); when
// one says no, class-validator decides and gives the reason.

const isRequestId = (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= 200;
const isOptionalPage = (value: unknown, max: number) => value === undefined || toPageNumber(value, 1, max) !== undefined;
const hasOnlyKeys = (value: Record<string, unknown>, allowed: readonly string[]) => Object.keys(value).every((key) => allowed.includes(key));

const AGENT_KEYS = ['agent_id'];
const HISTORY_KEYS = ['agent_id', 'page', 'page_size'];
const STATEMENTS_KEYS = ['agent_id', 'page', 'page_size', 'status'];
const STATEMENT_KEYS = ['agent_id', 'statement_id'];

export function passesPayoutsAgentRequestFastCheck(value: unknown): boolean {
  return isPlainObject(value) && hasOnlyKeys(value, AGENT_KEYS) && isRequestId(value.agent_id);
}

export function passesPayoutHistoryListRequestFastCheck(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    hasOnlyKeys(value, HISTORY_KEYS) &&
    isRequestId(value.agent_id) &&
    isOptionalPage(value.page, Number.MAX_SAFE_INTEGER) &&
    isOptionalPage(value.page_size, PAYOUTS_MAX_PAGE_SIZE)
  );
}

export function passesPayoutStatementsListRequestFastCheck(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    hasOnlyKeys(value, STATEMENTS_KEYS) &&
    isRequestId(value.agent_id) &&
    isOptionalPage(value.page, Number.MAX_SAFE_INTEGER) &&
    isOptionalPage(value.page_size, PAYOUTS_MAX_PAGE_SIZE) &&
    (value.status === undefined || (PAYOUT_STATEMENT_STATUSES as readonly unknown[]).includes(value.status))
  );
}

export function passesPayoutStatementGetRequestFastCheck(value: unknown): boolean {
  return isPlainObject(value) && hasOnlyKeys(value, STATEMENT_KEYS) && isRequestId(value.agent_id) && isRequestId(value.statement_id);
}

// ───────────────────────────── replies (DESIGN §5) ─────────────────────────────

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
