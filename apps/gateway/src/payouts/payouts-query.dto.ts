import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, ValidateBy } from 'class-validator';
import {
  PAYOUT_STATEMENT_STATUSES,
  PAYOUTS_DEFAULT_PAGE,
  PAYOUTS_DEFAULT_PAGE_SIZE,
  PAYOUTS_MAX_PAGE,
  PAYOUTS_MAX_PAGE_SIZE,
  SkipIfAbsent,
  shownValue,
  type PayoutStatementStatus,
} from '#libs/contracts';

/**
 * page / page_size: decimal digits only (no sign, exponent, fraction or spaces), as a number in
 * range; an absent one is left out, and payouts-read applies its default.
 */
function IsPageNumber(max: number, range: string): PropertyDecorator {
  return applyDecorators(
    SkipIfAbsent(),
    Transform(({ value }) => (typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value)),
    ValidateBy({
      name: 'isPageNumber',
      validator: {
        validate: (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max,
        defaultMessage: (args) => `$property must be ${range}; got ${shownValue(args?.value)}.`,
      },
    }),
  );
}

/** The query of GET /agent-payouts/me/history (DESIGN §5: out-of-range or unknown parameters → 422). */
export class PayoutHistoryQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: PAYOUTS_MAX_PAGE,
    default: PAYOUTS_DEFAULT_PAGE,
    description: `Page number, an integer from 1 to ${PAYOUTS_MAX_PAGE} (default ${PAYOUTS_DEFAULT_PAGE}). A page beyond the end has no items.`,
    example: 1,
  })
  @IsPageNumber(PAYOUTS_MAX_PAGE, `an integer from 1 to ${PAYOUTS_MAX_PAGE}`)
  page?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: PAYOUTS_MAX_PAGE_SIZE,
    default: PAYOUTS_DEFAULT_PAGE_SIZE,
    description: `Statements per page, an integer from 1 to ${PAYOUTS_MAX_PAGE_SIZE} (default ${PAYOUTS_DEFAULT_PAGE_SIZE}).`,
    example: PAYOUTS_DEFAULT_PAGE_SIZE,
  })
  @IsPageNumber(PAYOUTS_MAX_PAGE_SIZE, `an integer from 1 to ${PAYOUTS_MAX_PAGE_SIZE}`)
  page_size?: number;
}

/** The query of GET /agent-payouts/me/statements: the page, and optionally one status. */
export class PayoutStatementsQueryDto extends PayoutHistoryQueryDto {
  @ApiPropertyOptional({ type: 'string', enum: PAYOUT_STATEMENT_STATUSES, description: 'Only statements of this status (exact case). All statuses when absent.' })
  @SkipIfAbsent()
  @IsIn(PAYOUT_STATEMENT_STATUSES, {
    message: ({ value }) => `Unsupported status ${shownValue(value)}. Allowed values of status: ${PAYOUT_STATEMENT_STATUSES.join(', ')}.`,
  })
  status?: PayoutStatementStatus;
}
