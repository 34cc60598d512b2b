import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import {
  PAYOUT_HISTORY_STATUSES,
  PAYOUTS_RECENT_STATEMENTS,
  PayoutHistoryListRequestDto,
  PayoutStatementGetRequestDto,
  PayoutStatementsListRequestDto,
  PayoutsAgentRequestDto,
  QueueGroups,
  RpcSubjects,
  pageOf,
  passesPayoutHistoryListRequestFastCheck,
  passesPayoutStatementGetRequestFastCheck,
  passesPayoutStatementsListRequestFastCheck,
  passesPayoutsAgentRequestFastCheck,
  type PayoutBalancesReply,
  type PayoutOverviewReply,
  type PayoutPage,
  type PayoutReadiness,
  type PayoutStatement,
} from '#libs/contracts';
import { LOGGER } from '#libs/bootstrap';
import { NatsClient, RpcHandlerError, SerializedResult, serveRpc } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { PayoutReplyCache } from './payout-reply-cache.js';
import { PayoutsRepository } from './payouts.repository.js';

/**
 * Answers the `payouts.v1.*` requests in the payouts-read queue group. The request's agent_id is
 * the authenticated platform (the gateway sets it); every query is scoped by it here too.
 */
@Injectable()
export class PayoutsHandler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly nats: NatsClient,
    private readonly repository: PayoutsRepository,
    private readonly replies: PayoutReplyCache,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const options = <T extends object>(requestClass: new () => T, fastCheck: (payload: unknown) => boolean) => ({
      queue: QueueGroups.payouts,
      requestClass,
      fastCheck,
      logger: this.logger,
    });
    this.subscriptions = [
      serveRpc(this.nats, RpcSubjects.payoutsBalanceGet, options(PayoutsAgentRequestDto, passesPayoutsAgentRequestFastCheck), (r) => this.cached('balance', r, () => this.balance(r))),
      serveRpc(this.nats, RpcSubjects.payoutsReadinessGet, options(PayoutsAgentRequestDto, passesPayoutsAgentRequestFastCheck), (r) => this.cached('readiness', r, () => this.readiness(r))),
      serveRpc(this.nats, RpcSubjects.payoutsOverviewGet, options(PayoutsAgentRequestDto, passesPayoutsAgentRequestFastCheck), (r) => this.cached('overview', r, () => this.overview(r))),
      serveRpc(this.nats, RpcSubjects.payoutsStatementsList, options(PayoutStatementsListRequestDto, passesPayoutStatementsListRequestFastCheck), (r) => this.cached('statements', r, () => this.statements(r))),
      serveRpc(this.nats, RpcSubjects.payoutsStatementGet, options(PayoutStatementGetRequestDto, passesPayoutStatementGetRequestFastCheck), (r) => this.cached('statement', r, () => this.statement(r))),
      serveRpc(this.nats, RpcSubjects.payoutsHistoryList, options(PayoutHistoryListRequestDto, passesPayoutHistoryListRequestFastCheck), (r) => this.cached('history', r, () => this.history(r))),
    ];
  }

  /** Stop taking requests; NATS drain then lets the ones in flight answer. */
  beforeApplicationShutdown(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /**
   * Replies are cached per platform until its read model changes (PayoutReplyCache), already
   * serialized: a cached 100-statement page is sent without a query or a JSON.stringify.
   */
  private cached<T>(query: string, request: { agent_id: string }, load: () => Promise<T>): Promise<SerializedResult> {
    return this.replies.reply(request.agent_id, `${query}:${JSON.stringify(request)}`, async () => new SerializedResult(JSON.stringify(await load())));
  }

  async balance(request: PayoutsAgentRequestDto): Promise<PayoutBalancesReply> {
    return { balances: await this.repository.balances(request.agent_id) };
  }

  readiness(request: PayoutsAgentRequestDto): Promise<PayoutReadiness> {
    return this.repository.readiness(request.agent_id);
  }

  async overview(request: PayoutsAgentRequestDto): Promise<PayoutOverviewReply> {
    const [balances, readiness, recent] = await Promise.all([
      this.repository.balances(request.agent_id),
      this.repository.readiness(request.agent_id),
      this.repository.recentStatements(request.agent_id, PAYOUTS_RECENT_STATEMENTS),
    ]);
    return { balances, readiness, latest_statement: recent[0] ?? null, recent_statements: recent };
  }

  async statements(request: PayoutStatementsListRequestDto): Promise<PayoutPage<PayoutStatement>> {
    const { page, pageSize } = pageOf(request);
    const statuses = request.status ? [request.status] : undefined;
    const { items, total } = await this.repository.statements(request.agent_id, statuses, page, pageSize);
    return { items, page, page_size: pageSize, total };
  }

  async statement(request: PayoutStatementGetRequestDto): Promise<PayoutStatement> {
    const statement = await this.repository.statement(request.agent_id, request.statement_id);
    // Another platform's statement and an unknown id answer alike: existence is never revealed.
    if (!statement) throw new RpcHandlerError({ code: 'not_found', message: 'statement not found' });
    return statement;
  }

  async history(request: PayoutHistoryListRequestDto): Promise<PayoutPage<PayoutStatement>> {
    const { page, pageSize } = pageOf(request);
    const { items, total } = await this.repository.statements(request.agent_id, PAYOUT_HISTORY_STATUSES, page, pageSize);
    return { items, page, page_size: pageSize, total };
  }
}
