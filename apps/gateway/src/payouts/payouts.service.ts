import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { PAYOUTS_DEFAULT_PAGE, PAYOUTS_DEFAULT_PAGE_SIZE, RpcSubjects } from '#libs/contracts';
import { DOWNSTREAM, replyBytes } from '../http/downstream-services.js';
import { ProblemException } from '../http/problem.js';
import { PayoutsReplyCache, type PayoutReply } from './payouts-reply-cache.js';
import type { PayoutHistoryQueryDto, PayoutStatementsQueryDto } from './payouts-query.dto.js';

/** The role the ID token must carry (SPEC Authentication: "with role agent"). */
export const PAYOUTS_ROLE = 'agent';
/** Longest statement id a statement can have (the event contract); a longer one is unknown. */
export const MAX_STATEMENT_ID_LENGTH = 200;

const { notFound: NOT_FOUND } = DOWNSTREAM.payoutsRead;

/** The cache key of a page: the query with payouts-read's defaults applied, so equal pages share an entry. */
function pageKey(route: string, query: PayoutStatementsQueryDto): string {
  return `${route}?page=${query.page ?? PAYOUTS_DEFAULT_PAGE}&page_size=${query.page_size ?? PAYOUTS_DEFAULT_PAGE_SIZE}&status=${query.status ?? ''}`;
}

/**
 * The payout data of one platform (`agentId`: always the caller's, from its ID token) from
 * payouts-read over NATS request/reply, which scopes every query by that agent_id too. Replies
 * are the JSON bytes payouts-read sent, forwarded without parsing them, through the gateway's
 * cache of large replies (PayoutsReplyCache, keyed by platform, route and normalized query);
 * failures of the request/reply are RpcCallFilter's.
 */
@Injectable()
export class PayoutsService {
  constructor(
    private readonly replies: PayoutsReplyCache,
    @Inject(DOWNSTREAM.payoutsRead.client) private readonly payouts: ClientProxy,
  ) {}

  balance(agentId: string, requestId: string): Promise<PayoutReply> {
    return this.ask(RpcSubjects.payoutsBalanceGet, { agent_id: agentId }, 'balance', requestId);
  }

  readiness(agentId: string, requestId: string): Promise<PayoutReply> {
    return this.ask(RpcSubjects.payoutsReadinessGet, { agent_id: agentId }, 'readiness', requestId);
  }

  overview(agentId: string, requestId: string): Promise<PayoutReply> {
    return this.ask(RpcSubjects.payoutsOverviewGet, { agent_id: agentId }, 'overview', requestId);
  }

  statements(agentId: string, query: PayoutStatementsQueryDto, requestId: string): Promise<PayoutReply> {
    return this.ask(RpcSubjects.payoutsStatementsList, { agent_id: agentId, ...query }, pageKey('statements', query), requestId, { list: true });
  }

  history(agentId: string, query: PayoutHistoryQueryDto, requestId: string): Promise<PayoutReply> {
    return this.ask(RpcSubjects.payoutsHistoryList, { agent_id: agentId, ...query }, pageKey('history', query), requestId, { list: true });
  }

  async statement(agentId: string, statementId: string, requestId: string): Promise<PayoutReply> {
    // No statement has an empty or over-long id, nor one with NUL (PostgreSQL text cannot hold
    // it): answer as for any unknown id, without asking.
    if (!statementId || statementId.length > MAX_STATEMENT_ID_LENGTH || statementId.includes('\u0000')) throw new ProblemException(NOT_FOUND.slug, NOT_FOUND.detail);
    return this.ask(RpcSubjects.payoutsStatementGet, { agent_id: agentId, statement_id: statementId }, `statement/${statementId}`, requestId);
  }

  /**
   * The reply of payouts-read for `payload`, from the reply cache when it holds it, else over
   * NATS. `list`: the reply is a page of a list (not kept when it is past the last page).
   */
  private ask(subject: string, payload: { agent_id: string; [field: string]: unknown }, key: string, requestId: string, options: { list?: boolean } = {}): Promise<PayoutReply> {
    return this.replies.reply(payload.agent_id, key, () => replyBytes(this.payouts, subject, payload, requestId), options);
  }
}
