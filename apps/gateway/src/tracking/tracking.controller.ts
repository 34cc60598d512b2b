import { Controller, Get, HttpCode, Req, Res } from '@nestjs/common';
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
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemDto } from '../http/problem.dto.js';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { ProblemException } from '../http/problem.js';
import type { TrackingKind } from './tracking-token.js';
import { TrackingService, TrackingUnavailableError } from './tracking.service.js';

export const TRACKING_RETRY_AFTER_SECONDS = 1;
const NOT_FOUND = 'This tracking link is not valid.';
const UNAVAILABLE = 'Tracking is temporarily unavailable; retry later.';

/** The one `t` of the query string; undefined when absent, repeated or empty (other parameters are ignored). */
export function tokenOf(rawUrl: string): string | undefined {
  const mark = rawUrl.indexOf('?');
  if (mark < 0) return undefined;
  const hash = rawUrl.indexOf('#', mark);
  const values = new URLSearchParams(rawUrl.slice(mark + 1, hash < 0 ? undefined : hash)).getAll('t');
  return values.length === 1 && values[0] !== '' ? values[0] : undefined;
}

const TOKEN_QUERY = {
  name: 't',
  required: true,
  description: 'The signed tracking token, exactly as it appears in the URL the recommendation carried. Build no URL yourself: use exposure_url and click_url as given.',
  schema: { type: 'string' },
} as const;

const NOT_FOUND_DOC = problemResponse('The token is missing, malformed, altered, signed with another secret or meant for the other route. No event is recorded.', {
  invalid: { summary: 'Invalid token', value: problemExample('not-found', NOT_FOUND) },
});
const UNAVAILABLE_DOC = problemResponse(
  'The event should have been recorded but could not be (the platform could not be looked up, or neither the message broker nor the gateway\'s outbox took it); nothing was counted. Retry after Retry-After seconds.',
  { unavailable: { summary: 'Tracking unavailable', value: problemExample('service-unavailable', UNAVAILABLE) } },
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
  async exposure(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.record('shown', request);
    void reply.header('Cache-Control', 'no-store');
  }

  @Get('track/click')
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
  async click(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const landing = await this.record('clicked', request);
    void reply.status(302).header('Location', landing).header('Cache-Control', 'no-store');
  }

  /** Verifies the token and records its event when it may; the landing URL for clicks. */
  private async record(kind: TrackingKind, request: FastifyRequest): Promise<string> {
    const claims = this.tracking.verify(tokenOf(request.raw.url ?? request.url), kind);
    if (!claims) throw new ProblemException('not-found', NOT_FOUND);
    try {
      // request.ip: the TCP peer, or the X-Forwarded-For address given by a TRUSTED_PROXIES peer.
      await this.tracking.record(kind, claims, request.ip, String(request.id));
    } catch (error) {
      if (error instanceof TrackingUnavailableError) {
        throw new ProblemException('service-unavailable', UNAVAILABLE, { 'Retry-After': String(TRACKING_RETRY_AFTER_SECONDS) });
      }
      throw error;
    }
    return claims.landing_url ?? '';
  }
}
