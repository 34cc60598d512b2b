import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PAYOUTS_DEFAULT_PAGE, PAYOUTS_DEFAULT_PAGE_SIZE, PAYOUTS_MAX_PAGE, PAYOUTS_MAX_PAGE_SIZE, PAYOUT_STATEMENT_STATUSES, type PayoutStatementStatus } from './payouts.constants.js';
import { FastCheck } from './fast-check.js';
import {
  passesPayoutHistoryListRequestFastCheck,
  passesPayoutStatementGetRequestFastCheck,
  passesPayoutStatementsListRequestFastCheck,
  passesPayoutsAgentRequestFastCheck,
} from './payouts-requests.fast-check.js';
import { IsPageNumber } from './payouts.validators.js';

// The request DTOs of payouts-read's request/reply subjects (payouts.v1.*, DESIGN §5 "Payouts").

/**
 * Every request names the caller's platform: the gateway passes the authenticated platform, and
 * payouts-read scopes every query by it. Unknown keys are refused (invalid_request).
 */
@FastCheck(passesPayoutsAgentRequestFastCheck)
export class PayoutsAgentRequestDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;
}

/** `payouts.v1.history.list`. page 1–10,000 (default 1), page_size 1–100 (default 20). */
@FastCheck(passesPayoutHistoryListRequestFastCheck)
export class PayoutHistoryListRequestDto extends PayoutsAgentRequestDto {
  @IsOptional() @IsPageNumber(1, PAYOUTS_MAX_PAGE)
  page?: number | string;

  @IsOptional() @IsPageNumber(1, PAYOUTS_MAX_PAGE_SIZE)
  page_size?: number | string;
}

/** `payouts.v1.statements.list`: as history, with an optional status filter. */
@FastCheck(passesPayoutStatementsListRequestFastCheck)
export class PayoutStatementsListRequestDto extends PayoutHistoryListRequestDto {
  @IsOptional() @IsIn(PAYOUT_STATEMENT_STATUSES)
  status?: PayoutStatementStatus;
}

/** `payouts.v1.statement.get`: one of the caller's statements; anything else is not_found. */
@FastCheck(passesPayoutStatementGetRequestFastCheck)
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
