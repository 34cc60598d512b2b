import { Controller, Get, Param, Query } from '@nestjs/common';
import { Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import { NoQueryDto } from '../http/no-query.dto.js';
import { RequestId } from '../http/request-id.decorator.js';
import { PayoutReplyRoute } from './payout-reply.interceptor.js';
import type { PayoutReply } from './payouts-reply-cache.js';
import { PayoutHistoryQueryDto, PayoutStatementsQueryDto } from './payouts-query.dto.js';
import { ApiPayoutBalance, ApiPayoutHistory, ApiPayoutOverview, ApiPayoutReadiness, ApiPayoutStatement, ApiPayoutStatements, ApiPayouts } from './payouts-responses.js';
import { PayoutsService } from './payouts.service.js';

/**
 * GET /agent-payouts/me/*: read-only payout data of the signed-in platform account (SPEC
 * "Payout read endpoints", DESIGN §5). Order of checks: the guard answers 401/403 first (ID
 * token with role agent; API keys refused), then the query string is validated (422: RawInputGuard,
 * then the query DTO), then PayoutsService asks payouts-read with the agent_id of the principal
 * only (its failures: RpcCallFilter). The answers are PayoutReplyInterceptor's HTTP form of the
 * reply.
 */
@ApiPayouts()
@Controller('agent-payouts/me')
export class PayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Get('balance')
  @ApiPayoutBalance()
  @PayoutReplyRoute()
  getPayoutBalance(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto, @RequestId() requestId: string): Promise<PayoutReply> {
    return this.payouts.balance(owner.agent_id, requestId);
  }

  @Get('readiness')
  @ApiPayoutReadiness()
  @PayoutReplyRoute()
  getPayoutReadiness(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto, @RequestId() requestId: string): Promise<PayoutReply> {
    return this.payouts.readiness(owner.agent_id, requestId);
  }

  @Get('overview')
  @ApiPayoutOverview()
  @PayoutReplyRoute()
  getPayoutOverview(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto, @RequestId() requestId: string): Promise<PayoutReply> {
    return this.payouts.overview(owner.agent_id, requestId);
  }

  @Get('statements')
  @ApiPayoutStatements()
  @PayoutReplyRoute()
  listPayoutStatements(@Owner() owner: OwnerPrincipal, @Query() query: PayoutStatementsQueryDto, @RequestId() requestId: string): Promise<PayoutReply> {
    return this.payouts.statements(owner.agent_id, query, requestId);
  }

  @Get('statements/:statement_id')
  @ApiPayoutStatement()
  @PayoutReplyRoute()
  getPayoutStatement(@Owner() owner: OwnerPrincipal, @Param('statement_id') statementId: string, @Query() _query: NoQueryDto, @RequestId() requestId: string): Promise<PayoutReply> {
    return this.payouts.statement(owner.agent_id, statementId, requestId);
  }

  @Get('history')
  @ApiPayoutHistory()
  @PayoutReplyRoute()
  listPayoutHistory(@Owner() owner: OwnerPrincipal, @Query() query: PayoutHistoryQueryDto, @RequestId() requestId: string): Promise<PayoutReply> {
    return this.payouts.history(owner.agent_id, query, requestId);
  }
}
