import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { PAYOUTS_MAX_PAGE, PAYOUTS_MAX_PAGE_SIZE } from '#libs/contracts';
import { IdTokenRoute } from '../auth/authenticated-route.decorator.js';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import {
  BALANCES_EXAMPLE,
  OVERVIEW_EXAMPLE,
  PAID_STATEMENT_EXAMPLE,
  PayoutBalanceDto,
  PayoutBalancesDto,
  PayoutFailureDto,
  PayoutOverviewDto,
  PayoutReadinessDto,
  PayoutStatementDto,
  PayoutStatementPageDto,
  PayoutThresholdDto,
  PayoutTransferDto,
  READINESS_EXAMPLE,
  STATEMENT_PAGE_EXAMPLE,
} from './payouts.dto.js';
import { MAX_STATEMENT_ID_LENGTH, PAYOUTS_ROLE } from './payouts.service.js';

/**
 * The OpenAPI description of GET /agent-payouts/me/* (DESIGN §5), one composed decorator a
 * route, with the ID token with role agent that every route requires (IdTokenRoute).
 */

const { unavailable: UNAVAILABLE, notFound: NOT_FOUND } = DOWNSTREAM.payoutsRead;

const NO_STORE_DOC = {
  'Cache-Control': { description: 'Payout data is private to the platform.', schema: { type: 'string', example: 'private, no-store' } },
  'Content-Encoding': {
    description: 'br or gzip when the client accepts it (Accept-Encoding) and the answer is large (a page of many statements); absent otherwise.',
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
  Vary: { description: 'Accept-Encoding, on answers large enough to be compressed.', schema: { type: 'string', example: 'Accept-Encoding' } },
};

/** What every payout endpoint shares: the ID token with role agent (401/403), its operation, and 503. */
function PayoutsEndpoint(operationId: string, summary: string, description: string) {
  return applyDecorators(
    IdTokenRoute(PAYOUTS_ROLE),
    ApiOperation({
      operationId,
      summary,
      description: `${description} Checks run in this order: ID token and role (401), account (403), input (422).`,
    }),
    ApiServiceUnavailableResponse(
      problemResponse(
        'Payouts (or authentication) are temporarily unavailable, or the instance is shutting down. Retry after Retry-After seconds.',
        {
          payouts: { summary: 'Payouts unavailable', value: problemExample(UNAVAILABLE.slug, UNAVAILABLE.detail) },
          authentication: { summary: 'Authentication unavailable', value: problemExample('service-unavailable', 'Authentication is temporarily unavailable; retry later.') },
        },
        { 'Retry-After': { description: 'Seconds to wait before requesting again.', schema: { type: 'integer', example: UNAVAILABLE.retryAfterSeconds } } },
      ),
    ),
  );
}

/** 422 for an endpoint without query parameters. */
const NO_QUERY_422 = ApiUnprocessableEntityResponse(
  problemResponse('A query parameter was sent; this endpoint takes none.', {
    parameter: { summary: 'A query parameter', value: problemExample('invalid-query', 'Unsupported query parameter "agent_id": this endpoint takes no query parameters.') },
  }),
);

function pageQuery422(parameters: string) {
  return ApiUnprocessableEntityResponse(
    problemResponse(`page (1–${PAYOUTS_MAX_PAGE}) or page_size (1–${PAYOUTS_MAX_PAGE_SIZE}) is not an integer in range, a parameter is repeated or empty, or a parameter other than ${parameters} is present.`, {
      page_size: { summary: 'page_size out of range', value: problemExample('invalid-query', 'page_size must be an integer from 1 to 100; got "500".') },
      page: { summary: 'page not an integer', value: problemExample('invalid-query', 'page must be an integer from 1 to 10000; got "1.5".') },
      page_too_high: { summary: 'page above 10,000', value: problemExample('invalid-query', 'page must be an integer from 1 to 10000; got "10001".') },
      other_parameter: {
        summary: 'Another query parameter',
        value: problemExample('invalid-query', `Unsupported query parameter "sort": supported parameters: ${parameters}.`),
      },
    }),
  );
}

const PAGE_DESCRIPTION = 'Ordered newest period first (ties by statement_id, so pages never overlap); `{items, page, page_size, total}`.';

/** The payouts tag and the schemas the routes' answers refer to. */
export function ApiPayouts(): ClassDecorator {
  return applyDecorators(
    ApiTags('payouts'),
    ApiExtraModels(
      ProblemDto,
      PayoutBalanceDto,
      PayoutBalancesDto,
      PayoutThresholdDto,
      PayoutReadinessDto,
      PayoutFailureDto,
      PayoutTransferDto,
      PayoutStatementDto,
      PayoutStatementPageDto,
      PayoutOverviewDto,
    ),
  );
}

/** The 200 of a route: its description, schema and example, with the request-id and cache headers. */
function ok(description: string, type: Type, example: object) {
  return ApiOkResponse({ description, type, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example });
}

/** A route without query parameters: 200 of `type`, 422 for any query parameter. */
function NoQueryEndpoint(answer: [description: string, type: Type, example: object], operation: [operationId: string, summary: string, description: string]): MethodDecorator {
  return applyDecorators(NO_QUERY_422, ok(...answer), PayoutsEndpoint(...operation));
}

/** A paginated route taking `parameters`: 200 with a page of statements, 422 for a bad page or another parameter. */
function PageEndpoint(parameters: string, description: string, operation: [operationId: string, summary: string, description: string]): MethodDecorator {
  return applyDecorators(pageQuery422(parameters), ok(description, PayoutStatementPageDto, STATEMENT_PAGE_EXAMPLE), PayoutsEndpoint(...operation));
}

const BALANCE_DESCRIPTION =
  'Every currency of the platform with its four buckets in integer micros: pending (recorded, not yet available), available (settled, ' +
  'available for payout consideration; not a sent transfer), locked (reserved for a statement, including BLOCKED or FAILED processing) and paid out. ' +
  'Payout balances follow the earnings ledger and settlement; they can differ from the reporting earnings at any moment.';
const READINESS_DESCRIPTION =
  'Setup status, missing fields, payout thresholds (minimum payout amount per currency) and a blocked reason. ' +
  'Before anything is known about the setup, setup_status is not_started and updated_at is null.';
const OVERVIEW_DESCRIPTION =
  'One answer for a payout dashboard: the balances, the readiness, the latest statement (null when there is none) and the 5 most recent statements of any status, newest period first.';

export const ApiPayoutBalance = () => NoQueryEndpoint(['The balances (empty when none is known yet).', PayoutBalancesDto, BALANCES_EXAMPLE], ['getPayoutBalance', 'Payout balance snapshot by currency', BALANCE_DESCRIPTION]);
export const ApiPayoutReadiness = () => NoQueryEndpoint(['The readiness.', PayoutReadinessDto, READINESS_EXAMPLE], ['getPayoutReadiness', 'Payout setup readiness', READINESS_DESCRIPTION]);
export const ApiPayoutOverview = () => NoQueryEndpoint(['The overview.', PayoutOverviewDto, OVERVIEW_EXAMPLE], ['getPayoutOverview', 'Balances, readiness, latest statement and recent statements', OVERVIEW_DESCRIPTION]);
export const ApiPayoutStatements = () =>
  PageEndpoint('page, page_size, status (LOCKED, BLOCKED, FAILED, PAID)', 'One page of statements.', ['listPayoutStatements', 'Payout statements, paginated', `The statements of the platform, optionally of one status. ${PAGE_DESCRIPTION}`]);
export const ApiPayoutHistory = () =>
  PageEndpoint('page, page_size', 'One page of the history.', ['listPayoutHistory', 'Payout history, paginated', `The locked, blocked, failed and paid statements of the platform. ${PAGE_DESCRIPTION}`]);

export function ApiPayoutStatement(): MethodDecorator {
  return applyDecorators(
    NO_QUERY_422,
    ApiNotFoundResponse(
      problemResponse("No statement with this id belongs to the calling platform (also when it belongs to another platform: existence is never revealed).", {
        unknown: { summary: 'Unknown or not the caller’s', value: problemExample(NOT_FOUND.slug, NOT_FOUND.detail) },
      }),
    ),
    ok('The statement.', PayoutStatementDto, PAID_STATEMENT_EXAMPLE),
    ApiParam({
      name: 'statement_id',
      description: `Identifier of the statement (at most ${MAX_STATEMENT_ID_LENGTH} characters; a longer one is unknown: 404).`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_STATEMENT_ID_LENGTH },
      example: PAID_STATEMENT_EXAMPLE.statement_id,
    }),
    PayoutsEndpoint(
      'getPayoutStatement',
      'One payout statement with its transfer',
      "One of the caller's own statements with its transfer. The transfer currency can differ from the USD earnings currency; amount received, fees and exchange rate are given when provided. " +
        "Another platform's statement and an unknown id both answer 404.",
    ),
  );
}
