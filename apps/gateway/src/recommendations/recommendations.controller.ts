import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { LOGGER } from '#libs/bootstrap';
import {
  ConversationMessageDto,
  RECOMMEND_MAX_RESULTS,
  RecommendHttpBodyDto,
  RpcSubjects,
  isUtcTimestamp,
  type RankedRecommendation,
  type RecommendHttpResponse,
  type RecommendRequest,
  type RecommendResult,
  type RecommendationView,
} from '#libs/contracts';
import { withRequestId } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { ApiKeyRoute } from '../auth/authenticated-route.decorator.js';
import { Principal, type PlatformPrincipal } from '../auth/principal.js';
import { NOT_JSON_RESPONSE, REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { isLandingUrl } from '../tracking/tracking-token.js';
import { TrackingService } from '../tracking/tracking.service.js';
import { NOT_FOUND_EXAMPLE, NOT_FOUND_MESSAGE, RECOMMEND_RESPONSE_EXAMPLE, RecommendResponseDto, RecommendationDto } from './recommendations.dto.js';

/**
 * How much longer than the latency budget the gateway waits for the service: the budget is the
 * service's to spend; the margin covers the NATS round trip and the reply's serialization.
 */
export const RECOMMEND_TIMEOUT_MARGIN_MS = 250;

const { unavailable: UNAVAILABLE } = DOWNSTREAM.recommendations;
const RETRY_AFTER_DOC = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', example: UNAVAILABLE.retryAfterSeconds } },
};

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

/**
 * POST /agent/recommend: the call @vendor/weave-node makes. Order of checks: API key (401),
 * account (403), media type (415, RawInputGuard), body (422, RecommendHttpBodyDto); then the
 * recommendations service is asked over NATS request/reply with the platform and traffic of
 * the key, and the gateway adds the signed tracking URLs to what it answers. 503 when the
 * service does not answer within the latency budget plus a margin (RpcCallFilter).
 */
@ApiTags('recommendations')
@ApiExtraModels(ProblemDto, RecommendResponseDto, RecommendationDto, ConversationMessageDto)
@Controller()
export class RecommendationsController {
  constructor(
    @Inject(DOWNSTREAM.recommendations.client) private readonly recommendations: ClientProxy,
    private readonly tracking: TrackingService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Post('agent/recommend')
  @HttpCode(200)
  @ApiKeyRoute()
  @ApiOperation({
    operationId: 'recommend',
    summary: 'Recommendations for a query, to weave into an LLM answer',
    description:
      'What getRecommendationsForWeave of @vendor/weave-node calls. Ranks the ads of the catalog for the query and answers at most ' +
      `${RECOMMEND_MAX_RESULTS} recommendations with signed tracking URLs. The same session_id and message_id asked again return the same recommendations. ` +
      'A production key makes live recommendations, a test key test ones. None found is a 200 with an empty list and error. ' +
      'Checks run in this order: API key (401), account (403), media type (415), body (422).',
  })
  @ApiOkResponse({
    description: 'The recommendations (possibly none).',
    headers: { ...REQUEST_ID_HEADER_DOC },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/RecommendResponse' },
        examples: {
          found: { summary: 'Recommendations found', value: RECOMMEND_RESPONSE_EXAMPLE },
          none: { summary: 'None found', value: NOT_FOUND_EXAMPLE },
        },
      },
    },
  })
  @NOT_JSON_RESPONSE
  @ApiUnprocessableEntityResponse(
    problemResponse('A required field is missing or empty, a field has the wrong type or is too long, or an unknown field is present.', {
      missing: { summary: 'Missing query', value: problemExample('invalid-body', 'query is required. Send {"session_id": "…", "message_id": "…", "query": "…"} with the optional fields of the API reference.') },
      unknown_field: { summary: 'Another field', value: problemExample('invalid-body', 'Unsupported field "agent_id".') },
    }),
  )
  @ApiServiceUnavailableResponse(
    problemResponse(
      'The recommendations service (or authentication) did not answer in time. Retry after Retry-After seconds.',
      { recommendations: { summary: 'Recommendations unavailable', value: problemExample(UNAVAILABLE.slug, UNAVAILABLE.detail) } },
      RETRY_AFTER_DOC,
    ),
  )
  async recommend(@Principal() principal: PlatformPrincipal, @Body() body: RecommendHttpBodyDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<RecommendHttpResponse> {
    // The body's budget is the effective one (defaulted, clamped): the service's to spend.
    const requestId = String(request.id);
    const payload: RecommendRequest = { ...body, agent_id: principal.agent_id, traffic: principal.traffic, request_id: requestId };
    const timeoutMs = payload.latency_budget_ms + RECOMMEND_TIMEOUT_MARGIN_MS;
    const answer = await firstValueFrom(this.recommendations.send<RecommendResult>(RpcSubjects.recommend, withRequestId(payload, requestId, { timeoutMs })));
    void reply.header('Cache-Control', 'no-store');

    const ranked = Array.isArray(answer?.recommendations) ? answer.recommendations : [];
    const servable = ranked.filter(isServable).slice(0, RECOMMEND_MAX_RESULTS);
    if (servable.length < Math.min(ranked.length, RECOMMEND_MAX_RESULTS)) {
      this.logger.error({ requestId, received: ranked.length, servable: servable.length }, 'recommendations answered entries that break the contract; left out');
    }
    const recommendations = servable.map((r) => this.view(r, principal));
    const response: RecommendHttpResponse = { request_id: requestId, query: body.query, recommendations };
    if (recommendations.length === 0) response.error = NOT_FOUND_MESSAGE;
    return response;
  }

  /** The SPEC fields of one recommendation plus its signed tracking URLs (landing_url and created_at stay inside the tokens). */
  private view(r: RankedRecommendation, principal: PlatformPrincipal): RecommendationView {
    const { exposure_url, click_url } = this.tracking.links(r, principal.agent_id, principal.traffic);
    const view: RecommendationView = {
      recommendation_id: r.recommendation_id,
      ad_id: r.ad_id,
      product_id: r.product_id,
      product_title: r.product_title,
      click_url,
      exposure_url,
      creative_input: r.creative_input,
      contextual_relevance_score: r.contextual_relevance_score,
    };
    if (typeof r.weave_summary === 'string') view.weave_summary = r.weave_summary;
    if (typeof r.tail_summary === 'string') view.tail_summary = r.tail_summary;
    return view;
  }
}
