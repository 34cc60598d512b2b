import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { RECOMMEND_MAX_RESULTS, type RecommendHttpResponse } from '#libs/contracts';
import { ConversationMessageDto, RecommendHttpBodyDto } from '#libs/recommend-request';
import { ApiKeyRoute } from '../auth/authenticated-route.decorator.js';
import { Principal, type PlatformPrincipal } from '../auth/principal.js';
import { NOT_JSON_RESPONSE, REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { RequestId } from '../http/request-id.decorator.js';
import { NOT_FOUND_EXAMPLE, RECOMMEND_RESPONSE_EXAMPLE, RecommendResponseDto, RecommendationDto } from './recommendations.dto.js';
import { RecommendationsService } from './recommendations.service.js';

const { unavailable: UNAVAILABLE } = DOWNSTREAM.recommendations;
const RETRY_AFTER_DOC = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', example: UNAVAILABLE.retryAfterSeconds } },
};

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
  constructor(private readonly recommendations: RecommendationsService) {}

  @Post('agent/recommend')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
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
  recommend(@Principal() principal: PlatformPrincipal, @Body() body: RecommendHttpBodyDto, @RequestId() requestId: string): Promise<RecommendHttpResponse> {
    return this.recommendations.recommend(principal, body, requestId);
  }
}
