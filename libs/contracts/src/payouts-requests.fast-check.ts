import { PAYOUTS_MAX_PAGE, PAYOUTS_MAX_PAGE_SIZE, PAYOUT_STATEMENT_STATUSES } from './payouts.constants.js';
import { isPlainObject, toPageNumber } from './payouts.validators.js';

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
    isOptionalPage(value.page, PAYOUTS_MAX_PAGE) &&
    isOptionalPage(value.page_size, PAYOUTS_MAX_PAGE_SIZE)
  );
}

export function passesPayoutStatementsListRequestFastCheck(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    hasOnlyKeys(value, STATEMENTS_KEYS) &&
    isRequestId(value.agent_id) &&
    isOptionalPage(value.page, PAYOUTS_MAX_PAGE) &&
    isOptionalPage(value.page_size, PAYOUTS_MAX_PAGE_SIZE) &&
    (value.status === undefined || (PAYOUT_STATEMENT_STATUSES as readonly unknown[]).includes(value.status))
  );
}

export function passesPayoutStatementGetRequestFastCheck(value: unknown): boolean {
  return isPlainObject(value) && hasOnlyKeys(value, STATEMENT_KEYS) && isRequestId(value.agent_id) && isRequestId(value.statement_id);
}
