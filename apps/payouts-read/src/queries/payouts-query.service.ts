import { Injectable } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import {
  PAYOUT_HISTORY_STATUSES,
  PAYOUTS_RECENT_STATEMENTS,
  pageOf,
  type PayoutBalancesReply,
  type PayoutHistoryListRequestDto,
  type PayoutOverviewReply,
  type PayoutPage,
  type PayoutReadiness,
  type PayoutStatement,
  type PayoutStatementGetRequestDto,
  type PayoutStatementsListRequestDto,
  type PayoutsAgentRequestDto,
  type RpcError,
} from '#libs/contracts';
import { PayoutsRepository } from './payouts.repository.js';

/**
 * The `payouts.v1.*` queries. The request's agent_id is the authenticated platform (the gateway
 * sets it); every query is scoped by it.
 */
@Injectable()
export class PayoutsQueryService {
  constructor(private readonly repository: PayoutsRepository) {}

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
    if (!statement) throw new RpcException({ code: 'not_found', message: 'statement not found' } satisfies RpcError);
    return statement;
  }

  async history(request: PayoutHistoryListRequestDto): Promise<PayoutPage<PayoutStatement>> {
    const { page, pageSize } = pageOf(request);
    const { items, total } = await this.repository.statements(request.agent_id, PAYOUT_HISTORY_STATUSES, page, pageSize);
    return { items, page, page_size: pageSize, total };
  }
}
