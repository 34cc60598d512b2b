import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  PayoutHistoryListRequestDto,
  PayoutStatementGetRequestDto,
  PayoutStatementsListRequestDto,
  PayoutsAgentRequestDto,
  RpcSubjects,
  type PayoutPage,
} from '#libs/contracts';
import { RawJson, RpcController } from '#libs/nats';
import { PayoutReplyCache } from './payout-reply-cache.js';
import { PayoutsQueryService } from './payouts-query.service.js';

/**
 * The `payouts.v1.*` requests, answered in the payouts-read queue group. Replies are cached per
 * platform until its read model changes (PayoutReplyCache), already serialized: a cached
 * 100-statement page is sent without a query or a JSON.stringify.
 */
@RpcController()
export class PayoutsController {
  constructor(
    private readonly queries: PayoutsQueryService,
    private readonly replies: PayoutReplyCache,
  ) {}

  @MessagePattern(RpcSubjects.payoutsBalanceGet)
  balance(@Payload() request: PayoutsAgentRequestDto): Promise<RawJson> {
    return this.cached('balance', request, () => this.queries.balance(request));
  }

  @MessagePattern(RpcSubjects.payoutsReadinessGet)
  readiness(@Payload() request: PayoutsAgentRequestDto): Promise<RawJson> {
    return this.cached('readiness', request, () => this.queries.readiness(request));
  }

  @MessagePattern(RpcSubjects.payoutsOverviewGet)
  overview(@Payload() request: PayoutsAgentRequestDto): Promise<RawJson> {
    return this.cached('overview', request, () => this.queries.overview(request));
  }

  @MessagePattern(RpcSubjects.payoutsStatementsList)
  statements(@Payload() request: PayoutStatementsListRequestDto): Promise<RawJson> {
    return this.cachedPage('statements', request, () => this.queries.statements(request));
  }

  @MessagePattern(RpcSubjects.payoutsStatementGet)
  statement(@Payload() request: PayoutStatementGetRequestDto): Promise<RawJson> {
    return this.cached('statement', request, () => this.queries.statement(request));
  }

  @MessagePattern(RpcSubjects.payoutsHistoryList)
  history(@Payload() request: PayoutHistoryListRequestDto): Promise<RawJson> {
    return this.cachedPage('history', request, () => this.queries.history(request));
  }

  private cached(query: string, request: { agent_id: string }, load: () => Promise<unknown>): Promise<RawJson> {
    return this.replies.reply(request.agent_id, `${query}:${JSON.stringify(request)}`, async () => RawJson.of(JSON.stringify(await load())));
  }

  /** A page of a list: cached like the rest, except a page past the last one (answered, never kept). */
  private cachedPage(query: string, request: { agent_id: string }, load: () => Promise<PayoutPage<unknown>>): Promise<RawJson> {
    let pastLastPage = false;
    const loadPage = async () => {
      const page = await load();
      pastLastPage = page.items.length === 0 && page.page > 1;
      return RawJson.of(JSON.stringify(page));
    };
    // `keep` is asked about this call's own load only (a joined load keeps its own answer).
    return this.replies.reply(request.agent_id, `${query}:${JSON.stringify(request)}`, loadPage, () => !pastLastPage);
  }
}
