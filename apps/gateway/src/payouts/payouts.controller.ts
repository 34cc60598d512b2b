import { Controller, Get, Inject, Param, Query, Req, Res, applyDecorators } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { ApiExtraModels, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { PAYOUTS_DEFAULT_PAGE, PAYOUTS_DEFAULT_PAGE_SIZE, PAYOUTS_MAX_PAGE, PAYOUTS_MAX_PAGE_SIZE, RpcSubjects } from '#libs/contracts';
import { withRequestId, type RawJson } from '#libs/nats';
import { IdTokenRoute } from '../auth/authenticated-route.decorator.js';
import { Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { NoQueryDto } from '../http/no-query.dto.js';
import { ProblemDto } from '../http/problem.dto.js';
import { ProblemException } from '../http/problem.js';
import { negotiateEncoding } from './content-encoding.js';
import { PayoutsReplyCache } from './payouts-reply-cache.js';
import { PayoutHistoryQueryDto, PayoutStatementsQueryDto } from './payouts-query.dto.js';
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

/** The role the ID token must carry (SPEC Authentication: "with role agent"). */
export const PAYOUTS_ROLE = 'agent';
/** Longest statement id a statement can have (the event contract); a longer one is unknown. */
const MAX_STATEMENT_ID_LENGTH = 200;

const { unavailable: UNAVAILABLE, notFound: NOT_FOUND } = DOWNSTREAM.payoutsRead;

// --- OpenAPI description of the responses (DESIGN §5); the handlers below are the behaviour. ---

const NO_STORE_DOC = {
  'Cache-Control': { description: 'Payout data is private to the platform.', schema: { type: 'string', example: 'private, no-store' } },
  'Content-Encoding': {
    description: 'br or gzip when the client accepts it (Accept-Encoding) and the answer is large (a page of many statements); absent otherwise.',
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
  Vary: { description: 'Accept-Encoding, on answers large enough to be compressed.', schema: { type: 'string', example: 'Accept-Encoding' } },
};

/** The cache key of a page: the query with payouts-read's defaults applied, so equal pages share an entry. */
function pageKey(route: string, query: PayoutStatementsQueryDto): string {
  return `${route}?page=${query.page ?? PAYOUTS_DEFAULT_PAGE}&page_size=${query.page_size ?? PAYOUTS_DEFAULT_PAGE_SIZE}&status=${query.status ?? ''}`;
}

/** What every payout endpoint shares: the ID token with role agent, and 401/403/503. */
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

/** `ask`'s last argument for the list routes: the reply is a page (not cached past the last page). */
const LIST_PAGE = true;

const PAGE_DESCRIPTION = 'Ordered newest period first (ties by statement_id, so pages never overlap); `{items, page, page_size, total}`.';

/**
 * GET /agent-payouts/me/*: read-only payout data of the signed-in platform account (SPEC
 * "Payout read endpoints", DESIGN §5). Order of checks: the guard answers 401/403 first (ID
 * token with role agent; API keys refused), then the query string is validated (422: RawInputGuard,
 * then the query DTO), then payouts-read is asked over NATS request/reply with the agent_id of
 * the principal only (its failures: RpcCallFilter).
 * payouts-read scopes every query by that agent_id too.
 */
@ApiTags('payouts')
@ApiExtraModels(
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
)
@Controller('agent-payouts/me')
export class PayoutsController {
  constructor(
    @Inject(DOWNSTREAM.payoutsRead.client) private readonly payouts: ClientProxy,
    private readonly replies: PayoutsReplyCache,
  ) {}

  @Get('balance')
  @PayoutsEndpoint(
    'getPayoutBalance',
    'Payout balance snapshot by currency',
    'Every currency of the platform with its four buckets in integer micros: pending (recorded, not yet available), available (settled, ' +
      'available for payout consideration; not a sent transfer), locked (reserved for a statement, including BLOCKED or FAILED processing) and paid out. ' +
      'Payout balances follow the earnings ledger and settlement; they can differ from the reporting earnings at any moment.',
  )
  @ApiOkResponse({ description: 'The balances (empty when none is known yet).', type: PayoutBalancesDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: BALANCES_EXAMPLE })
  @NO_QUERY_422
  async getPayoutBalance(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    return this.ask(RpcSubjects.payoutsBalanceGet, { agent_id: owner.agent_id }, 'balance', request, reply);
  }

  @Get('readiness')
  @PayoutsEndpoint(
    'getPayoutReadiness',
    'Payout setup readiness',
    'Setup status, missing fields, payout thresholds (minimum payout amount per currency) and a blocked reason. ' +
      'Before anything is known about the setup, setup_status is not_started and updated_at is null.',
  )
  @ApiOkResponse({ description: 'The readiness.', type: PayoutReadinessDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: READINESS_EXAMPLE })
  @NO_QUERY_422
  async getPayoutReadiness(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    return this.ask(RpcSubjects.payoutsReadinessGet, { agent_id: owner.agent_id }, 'readiness', request, reply);
  }

  @Get('overview')
  @PayoutsEndpoint(
    'getPayoutOverview',
    'Balances, readiness, latest statement and recent statements',
    'One answer for a payout dashboard: the balances, the readiness, the latest statement (null when there is none) and the 5 most recent statements of any status, newest period first.',
  )
  @ApiOkResponse({ description: 'The overview.', type: PayoutOverviewDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: OVERVIEW_EXAMPLE })
  @NO_QUERY_422
  async getPayoutOverview(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    return this.ask(RpcSubjects.payoutsOverviewGet, { agent_id: owner.agent_id }, 'overview', request, reply);
  }

  @Get('statements')
  @PayoutsEndpoint('listPayoutStatements', 'Payout statements, paginated', `The statements of the platform, optionally of one status. ${PAGE_DESCRIPTION}`)
  @ApiOkResponse({ description: 'One page of statements.', type: PayoutStatementPageDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: STATEMENT_PAGE_EXAMPLE })
  @pageQuery422('page, page_size, status (LOCKED, BLOCKED, FAILED, PAID)')
  async listPayoutStatements(@Owner() owner: OwnerPrincipal, @Query() query: PayoutStatementsQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    return this.ask(RpcSubjects.payoutsStatementsList, { agent_id: owner.agent_id, ...query }, pageKey('statements', query), request, reply, LIST_PAGE);
  }

  @Get('statements/:statement_id')
  @PayoutsEndpoint(
    'getPayoutStatement',
    'One payout statement with its transfer',
    "One of the caller's own statements with its transfer. The transfer currency can differ from the USD earnings currency; amount received, fees and exchange rate are given when provided. " +
      "Another platform's statement and an unknown id both answer 404.",
  )
  @ApiParam({
    name: 'statement_id',
    description: `Identifier of the statement (at most ${MAX_STATEMENT_ID_LENGTH} characters; a longer one is unknown: 404).`,
    schema: { type: 'string', minLength: 1, maxLength: MAX_STATEMENT_ID_LENGTH },
    example: PAID_STATEMENT_EXAMPLE.statement_id,
  })
  @ApiOkResponse({ description: 'The statement.', type: PayoutStatementDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: PAID_STATEMENT_EXAMPLE })
  @ApiNotFoundResponse(
    problemResponse("No statement with this id belongs to the calling platform (also when it belongs to another platform: existence is never revealed).", {
      unknown: { summary: 'Unknown or not the caller’s', value: problemExample(NOT_FOUND.slug, NOT_FOUND.detail) },
    }),
  )
  @NO_QUERY_422
  async getPayoutStatement(
    @Owner() owner: OwnerPrincipal,
    @Param('statement_id') statementId: string,
    @Query() _query: NoQueryDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    // No statement has an empty or over-long id: answer as for any unknown id, without asking.
    if (!statementId || statementId.length > MAX_STATEMENT_ID_LENGTH) throw new ProblemException(NOT_FOUND.slug, NOT_FOUND.detail);
    return this.ask(RpcSubjects.payoutsStatementGet, { agent_id: owner.agent_id, statement_id: statementId }, `statement/${statementId}`, request, reply);
  }

  @Get('history')
  @PayoutsEndpoint('listPayoutHistory', 'Payout history, paginated', `The locked, blocked, failed and paid statements of the platform. ${PAGE_DESCRIPTION}`)
  @ApiOkResponse({ description: 'One page of the history.', type: PayoutStatementPageDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: STATEMENT_PAGE_EXAMPLE })
  @pageQuery422('page, page_size')
  async listPayoutHistory(@Owner() owner: OwnerPrincipal, @Query() query: PayoutHistoryQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    return this.ask(RpcSubjects.payoutsHistoryList, { agent_id: owner.agent_id, ...query }, pageKey('history', query), request, reply, LIST_PAGE);
  }

  /**
   * The reply of payouts-read for `payload` (whose agent_id is the caller's platform), from the
   * gateway's cache of large replies when it holds it (PayoutsReplyCache, keyed by platform
   * and `key`; `list`: a page of a list, not kept when it is past the last page), else over NATS
   * request/reply. The JSON bytes payouts-read sent are forwarded
   * without parsing and re-serializing them; a large reply is compressed (once per cached
   * reply) when the client accepts br or gzip.
   */
  private async ask(
    subject: string,
    payload: { agent_id: string; [field: string]: unknown },
    key: string,
    request: FastifyRequest,
    reply: FastifyReply,
    list = false,
  ): Promise<Buffer> {
    // Payout data is per platform and private: no shared caches.
    void reply.header('Cache-Control', 'private, no-store');
    const answer = await this.replies.reply(payload.agent_id, key, () => this.fetch(subject, payload, request), { list });
    void reply.type('application/json; charset=utf-8');
    if (!answer.large) return answer.body;
    void reply.header('Vary', 'Accept-Encoding');
    const encoding = negotiateEncoding(request.headers['accept-encoding']);
    if (!encoding) return answer.body;
    const compressed = await answer.encoded(encoding);
    void reply.header('Content-Encoding', encoding);
    return compressed;
  }

  /** One request/reply to payouts-read: the result's JSON bytes, unparsed (failures: RpcCallFilter). */
  private async fetch(subject: string, payload: object, request: FastifyRequest): Promise<Buffer> {
    const { bytes } = await firstValueFrom(this.payouts.send<RawJson>(subject, withRequestId(payload, String(request.id))));
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
  }
}
