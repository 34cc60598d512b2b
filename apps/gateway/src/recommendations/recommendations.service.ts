import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { LOGGER } from '#libs/bootstrap';
import {
  RECOMMEND_MAX_RESULTS,
  RpcSubjects,
  isUtcTimestamp,
  type RankedRecommendation,
  type RecommendHttpResponse,
  type RecommendResult,
  type RecommendationView,
} from '#libs/contracts';
import type { RecommendHttpBody, RecommendRequest } from '#libs/recommend-request';
import { withRequestId } from '#libs/nats';
import type { Logger } from '#libs/observability';
import type { PlatformPrincipal } from '../auth/principal.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { isLandingUrl } from '../tracking/tracking-token.js';
import { TrackingService, type TrackingLinks } from '../tracking/tracking.service.js';
import { NOT_FOUND_MESSAGE } from './recommendations.dto.js';

/**
 * How much longer than the latency budget the gateway waits for the service: the budget is the
 * service's to spend; the margin covers the NATS round trip and the reply's serialization.
 */
export const RECOMMEND_TIMEOUT_MARGIN_MS = 250;

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 200;
}

/** Whether a ranked recommendation of the service can be shown and tracked (a contract check). */
function isServable(r: RankedRecommendation): boolean {
  return (
    typeof r === 'object' && r !== null &&
    isText(r.recommendation_id) && isText(r.ad_id) && isText(r.product_id) &&
    typeof r.product_title === 'string' && r.product_title.length > 0 &&
    typeof r.contextual_relevance_score === 'number' && r.contextual_relevance_score >= 0 && r.contextual_relevance_score <= 100 &&
    typeof r.creative_input === 'object' && r.creative_input !== null && !Array.isArray(r.creative_input) &&
    isUtcTimestamp(r.created_at) && isLandingUrl(r.landing_url)
  );
}

/** The SPEC fields of one recommendation plus its signed tracking URLs (landing_url and created_at stay inside the tokens). */
function view(r: RankedRecommendation, { exposure_url, click_url }: TrackingLinks): RecommendationView {
  const shown: RecommendationView = {
    recommendation_id: r.recommendation_id,
    ad_id: r.ad_id,
    product_id: r.product_id,
    product_title: r.product_title,
    click_url,
    exposure_url,
    creative_input: r.creative_input,
    contextual_relevance_score: r.contextual_relevance_score,
  };
  if (typeof r.weave_summary === 'string') shown.weave_summary = r.weave_summary;
  if (typeof r.tail_summary === 'string') shown.tail_summary = r.tail_summary;
  return shown;
}

/**
 * Recommendations for a platform's query: the recommendations service is asked over NATS
 * request/reply with the platform and traffic of the key (waiting the request's latency budget
 * plus a margin; failures: RpcCallFilter), and what it ranks is answered with the signed
 * tracking URLs of the tracking feature. The request id of the answer is the HTTP request's.
 */
@Injectable()
export class RecommendationsService {
  constructor(
    @Inject(DOWNSTREAM.recommendations.client) private readonly recommendations: ClientProxy,
    private readonly tracking: TrackingService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async recommend(principal: PlatformPrincipal, body: RecommendHttpBody, requestId: string): Promise<RecommendHttpResponse> {
    // The body's budget is the effective one (defaulted, clamped): the service's to spend.
    const payload: RecommendRequest = { ...body, agent_id: principal.agent_id, traffic: principal.traffic, request_id: requestId };
    const timeoutMs = payload.latency_budget_ms + RECOMMEND_TIMEOUT_MARGIN_MS;
    const answer = await firstValueFrom(this.recommendations.send<RecommendResult>(RpcSubjects.recommend, withRequestId(payload, requestId, { timeoutMs })));

    const ranked = Array.isArray(answer?.recommendations) ? answer.recommendations : [];
    const recommendations: RecommendationView[] = [];
    if (ranked.length > 0) {
      const link = this.tracking.linker(principal.agent_id, principal.traffic);
      for (const r of ranked) {
        if (recommendations.length === RECOMMEND_MAX_RESULTS) break;
        if (isServable(r)) recommendations.push(view(r, link(r)));
      }
    }
    if (recommendations.length < Math.min(ranked.length, RECOMMEND_MAX_RESULTS)) {
      this.logger.error({ requestId, received: ranked.length, servable: recommendations.length }, 'recommendations answered entries that break the contract; left out');
    }
    const response: RecommendHttpResponse = { request_id: requestId, query: body.query, recommendations };
    if (recommendations.length === 0) response.error = NOT_FOUND_MESSAGE;
    return response;
  }
}
