import { Inject, Injectable } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { LOGGER } from '#libs/bootstrap';
import { RECOMMEND_MAX_RESULTS, type RankedRecommendation, type RecommendResult, type RpcError } from '#libs/contracts';
import type { RecommendRequest } from '#libs/recommend-request';
import { counter, type Logger } from '#libs/observability';
import { RecommendationsEnv } from '../config/recommendations.env.js';
import { answerDeadlineMs, conversationContext, effectiveBudgetMs, searchTimeoutMs } from '../ranking/relevance.js';
import { GeneratedEventsRelay } from './generated-events.relay.js';
import { RecommendationRepository, UnstorableText, type AnswerKey, type Answered } from './recommendation.repository.js';

const answers = counter('weave_recommendations_answers_total', 'Answers to recommendations.v1.recommend', ['outcome']);

/** PostgreSQL's query_canceled: the statement_timeout of the search fired. */
const QUERY_CANCELED = '57014';

const OUT_OF_TIME: RpcError = {
  code: 'unavailable',
  message: 'no answer within the latency budget; retry the request (the same session and message ids are safe to repeat)',
};
/**
 * One exception, thrown for every answer out of time, built once without a stack: under
 * overload every request may end here, and capturing a stack each time is CPU the answers
 * that can still make it need. The error filter only reads its RpcError.
 */
const OUT_OF_TIME_EXCEPTION = (() => {
  const depth = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RpcException(OUT_OF_TIME);
  } finally {
    Error.stackTraceLimit = depth;
  }
})();
const outOfTime = () => OUT_OF_TIME_EXCEPTION;

/** At most one "over budget" warning per this many milliseconds, counting the answers late since the previous one. */
export const OVER_BUDGET_LOG_INTERVAL_MS = 10_000;

/**
 * Ranks the catalog for a question and records the answer once per (platform, traffic,
 * session, message): asked again, even concurrently, the same key gets the same
 * recommendations (ids and created_at included) and no second `generated` event.
 *
 * Latency: the answer is due within the request's budget (clamped to the contract's bounds)
 * less a reply margin. The answer's statement (the search and the recording, one round trip) runs
 * under `statement_timeout` = what is left of it, and the whole handler races the deadline, so a
 * slow database answers `unavailable` in time rather than late. A statement cancelled by the
 * timeout has recorded nothing.
 */
@Injectable()
export class RecommendService {
  constructor(
    private readonly env: RecommendationsEnv,
    private readonly records: RecommendationRepository,
    private readonly relay: GeneratedEventsRelay,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  private overBudget = { count: 0, loggedAt: 0 };

  async recommend(request: RecommendRequest): Promise<RecommendResult> {
    const deadline = Date.now() + answerDeadlineMs(effectiveBudgetMs(request.latency_budget_ms));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(outOfTime()), Math.max(0, deadline - Date.now()));
    });
    try {
      const recommendations = await Promise.race([this.answer(request, deadline), late]);
      return { request_id: request.request_id, query: request.query, recommendations };
    } catch (error) {
      if (error === OUT_OF_TIME_EXCEPTION) this.noteOverBudget(request);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Counts an answer out of time (metric), and warns once per interval with how many there were (the first one at once). */
  private noteOverBudget(request: RecommendRequest): void {
    answers.inc({ outcome: 'unavailable' });
    this.overBudget.count++;
    const now = Date.now();
    if (now - this.overBudget.loggedAt < OVER_BUDGET_LOG_INTERVAL_MS) return;
    this.logger.warn(
      { over_budget: this.overBudget.count, agent_id: request.agent_id, requestId: request.request_id, budget_ms: request.latency_budget_ms },
      'recommendations over budget (count since the previous warning; the last one identified)',
    );
    this.overBudget = { count: 0, loggedAt: now };
  }

  private async answer(request: RecommendRequest, deadline: number): Promise<RankedRecommendation[]> {
    const key: AnswerKey = { agent_id: request.agent_id, traffic: request.traffic, session_id: request.session_id, message_id: request.message_id };
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw outOfTime();

    let answered: Answered;
    try {
      answered = await this.records.answer(
        key,
        request.request_id,
        {
          query: request.query,
          context: conversationContext(request.messages, request.query),
          contextWeight: this.env.RECOMMENDATIONS_CONTEXT_WEIGHT,
          limit: RECOMMEND_MAX_RESULTS,
          minScore: this.env.RECOMMENDATIONS_MIN_SCORE,
        },
        searchTimeoutMs(remaining),
      );
    } catch (error) {
      if ((error as { code?: string }).code === QUERY_CANCELED) throw outOfTime();
      if (error instanceof UnstorableText) throw new RpcException({ code: 'invalid_request', message: error.message } satisfies RpcError);
      throw error;
    }

    switch (answered.kind) {
      case 'replay':
        answers.inc({ outcome: 'replayed' });
        return answered.recommendations;
      case 'none':
        answers.inc({ outcome: 'none' });
        return [];
      case 'lost_race':
        answers.inc({ outcome: 'replayed' });
        return this.records.findAnswer(key);
    }
    answers.inc({ outcome: 'found' });
    // Committed: answer now; the relay publishes in the background and retries from the outbox.
    this.relay.publishSoon(answered.events);
    return answered.recommendations;
  }
}
