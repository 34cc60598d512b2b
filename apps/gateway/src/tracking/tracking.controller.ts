import { Controller, Get, Header, HttpCode, Ip, Redirect, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiFoundResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiQuery,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ProblemDto } from '../http/problem.dto.js';
import { RequestId } from '../http/request-id.decorator.js';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { TRACKING_NOT_FOUND, TRACKING_RETRY_AFTER_SECONDS, TRACKING_UNAVAILABLE, TrackingService } from './tracking.service.js';


/** The one `t` of the query string; undefined when absent, repeated or empty (other parameters are ignored). */
export function tokenOf(rawUrl: string): string | undefined {
  const mark = rawUrl.indexOf('?');
  if (mark < 0) return undefined;
  const hash = rawUrl.indexOf('#', mark);
  const values = new URLSearchParams(rawUrl.slice(mark + 1, hash < 0 ? undefined : hash)).getAll('t');
  return values.length === 1 && values[0] !== '' ? values[0] : undefined;
}

/** The route's tracking token: the one `t` of the raw query string (tokenOf). */
const TrackingToken = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return tokenOf(request.raw.url ?? request.url);
});

const TOKEN_QUERY = {
  name: 't',
  required: true,
  description: 'The signed tracking token, exactly as it appears in the URL the recommendation carried. Build no URL yourself: use exposure_url and click_url as given.',
  schema: { type: 'string' },
} as const;

const NOT_FOUND_DOC = problemResponse('The token is missing, malformed, altered, signed with another secret or meant for the other route. No event is recorded.', {
  invalid: { summary: 'Invalid token', value: problemExample('not-found', TRACKING_NOT_FOUND) },
});
const UNAVAILABLE_DOC = problemResponse(
  'The event should have been recorded but could not be (the platform could not be looked up, or neither the message broker nor the gateway\'s outbox took it); nothing was counted. Retry after Retry-After seconds.',
  { unavailable: { summary: 'Tracking unavailable', value: problemExample('service-unavailable', TRACKING_UNAVAILABLE) } },
  { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', example: TRACKING_RETRY_AFTER_SECONDS } } },
);
const NO_STORE_DOC = { 'Cache-Control': { description: 'Every request must reach the gateway.', schema: { type: 'string', example: 'no-store' } } };

/** What a valid link's answer means for its event (DESIGN §5). */
const RECORDING_RULE =
  'Recorded unless the link is older than TRACKING_LINK_TTL_DAYS, its platform is suspended, the client address is over its per-minute limit, or this recommendation\'s event was recorded before (each recommendation counts once per kind): the answer is the same either way.';

/**
 * The tracking URLs of recommendations (`exposure_url`, `click_url`), opened by end users'
 * browsers or the platform's renderer: no API key, but only tokens the gateway signed are
 * accepted (404 otherwise, and no event). A valid token always answers as the user expects
 * (204, or 302 to its landing page) and records its lifecycle event when it may
 * (TrackingService: not expired, platform active, address under its limit, not recorded
 * before); a recorded event is answered after its PubAck, or, when JetStream does not
 * acknowledge, after it is written to the gateway's outbox (published later by
 * TrackingEventsRelay): never a silent drop. 503 only when the event can be kept nowhere.
 */
@ApiTags('tracking')
@ApiExtraModels(ProblemDto)
@Controller()
export class TrackingController {
  constructor(private readonly tracking: TrackingService) {}

  @Get('track/exposure')
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'trackExposure',
    summary: 'Record that a recommendation was shown',
    description:
      'The exposure_url of a recommendation: request it when the recommendation is shown to the user. Publishes events.recommendation.shown once per recommendation (repeats are harmless). No authentication.',
  })
  @ApiQuery(TOKEN_QUERY)
  @ApiNoContentResponse({ description: `A valid link. ${RECORDING_RULE}`, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC } })
  @ApiNotFoundResponse(NOT_FOUND_DOC)
  @ApiServiceUnavailableResponse(UNAVAILABLE_DOC)
  async exposure(@TrackingToken() token: string | undefined, @Ip() address: string, @RequestId() requestId: string): Promise<void> {
    await this.tracking.follow('shown', token, address, requestId);
  }

  @Get('track/click')
  @Redirect()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'trackClick',
    summary: 'Record a click and redirect to the landing page',
    description:
      'The click_url of a recommendation: the link the user follows. Publishes events.recommendation.clicked (billable) and redirects to the ad\'s landing page, which is part of the signed token. No authentication.',
  })
  @ApiQuery(TOKEN_QUERY)
  @ApiFoundResponse({
    description: `A valid link; the Location header is the landing page of the ad. ${RECORDING_RULE}`,
    headers: {
      ...REQUEST_ID_HEADER_DOC,
      ...NO_STORE_DOC,
      Location: { description: 'The landing page of the ad.', schema: { type: 'string', format: 'uri', example: 'https://shop.example/trail-runner-2' } },
    },
  })
  @ApiNotFoundResponse(NOT_FOUND_DOC)
  @ApiServiceUnavailableResponse(UNAVAILABLE_DOC)
  async click(@TrackingToken() token: string | undefined, @Ip() address: string, @RequestId() requestId: string): Promise<{ url: string }> {
    return { url: await this.tracking.follow('clicked', token, address, requestId) };
  }
}
