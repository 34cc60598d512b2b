import { Controller, HttpCode, Inject, Patch, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import { RpcSubjects, type TimezoneSetRequestDto, type TimezoneSetResult } from '#libs/contracts';
import { NatsClient, requestRpc } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { IdTokenGuard, Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import { GatewayEnv } from '../config/gateway.env.js';
import { ID_TOKEN_SECURITY } from '../docs/api-docs.js';
import { ProblemDto } from '../http/problem.dto.js';
import { problemExample, problemResponse } from '../docs/problem-responses.js';
import { askService, serviceErrorProblem, type ServiceProblems } from '../http/service-call.js';
import { ProblemException } from '../http/problem.js';
import { isJsonContentType, parseOnboardingBody } from './onboarding-body.js';
import { OnboardingSettingsDto, UpdateOnboardingRequestDto } from './onboarding.dto.js';

export const SETTINGS_RETRY_AFTER_SECONDS = 5;
const UNAVAILABLE = 'Settings are temporarily unavailable; retry later.';

/**
 * PATCH /agent/update-onboarding: the platform owner sets the reporting timezone. Order of
 * checks: ID token and owner (401), account (403), media type (415), body (422); then
 * timezone-settings is asked over NATS (503 when it does not answer in time).
 */
@ApiTags('onboarding')
@ApiExtraModels(ProblemDto, OnboardingSettingsDto)
@Controller()
export class OnboardingController {
  constructor(
    private readonly nats: NatsClient,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Patch('agent/update-onboarding')
  @HttpCode(200)
  @UseGuards(IdTokenGuard)
  @ApiBearerAuth(ID_TOKEN_SECURITY)
  @ApiOperation({
    operationId: 'updateOnboarding',
    summary: 'Set the reporting timezone of the platform',
    description:
      'The signed-in platform owner (identity-provider ID token, not the API key) sets the IANA timezone from which the `today` period starts. ' +
      'The next completed report uses it and names it in `timezone`; rolling windows (1d, 7d, 30d, 90d) stay UTC. Setting the value already in force changes nothing.',
  })
  @ApiBody({ type: UpdateOnboardingRequestDto, required: true })
  @ApiOkResponse({ description: 'The timezone in force.', type: OnboardingSettingsDto })
  @ApiUnauthorizedResponse(
    problemResponse('No, invalid or expired ID token, an API key instead of an ID token, or an account that owns no platform. Sign in again.', {
      missing: { summary: 'No token', value: problemExample('invalid-id-token', 'Send the ID token of the signed-in platform owner as "Authorization: Bearer <ID_TOKEN>".') },
      expired: { summary: 'Expired token', value: problemExample('invalid-id-token', 'The ID token has expired; sign in again for a new one.') },
      api_key: { summary: 'API key sent', value: problemExample('invalid-id-token', 'An API key is not accepted here; send the ID token of the signed-in platform owner.') },
    }),
  )
  @ApiForbiddenResponse(
    problemResponse('The platform account is unavailable (e.g. suspended). Contact support.', {
      unavailable: { summary: 'Suspended platform', value: problemExample('account-unavailable', 'The platform account is unavailable; contact support.') },
    }),
  )
  @ApiUnsupportedMediaTypeResponse(
    problemResponse('The body is not application/json.', {
      not_json: { summary: 'Not JSON', value: problemExample('unsupported-media-type', 'The body must be application/json.') },
    }),
  )
  @ApiUnprocessableEntityResponse(
    problemResponse('The body is not exactly {"reporting_timezone": <IANA name>}.', {
      offset: {
        summary: 'An offset',
        value: problemExample('invalid-body', '"+05:00" is not an IANA time zone name. Use a tz database name such as "America/New_York" or "UTC"; offsets like "+05:00" are not accepted.'),
      },
      unknown_field: { summary: 'Another field', value: problemExample('invalid-body', 'Unsupported field "agent_id": reporting_timezone is the only field.') },
    }),
  )
  @ApiServiceUnavailableResponse(
    problemResponse('Settings (or authentication) are temporarily unavailable. Retry after Retry-After seconds.', {
      settings: { summary: 'Settings unavailable', value: problemExample('settings-unavailable', UNAVAILABLE) },
    }),
  )
  async updateOnboarding(
    @Owner() owner: OwnerPrincipal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OnboardingSettingsDto> {
    if (!isJsonContentType(request.headers['content-type'])) {
      throw new ProblemException('unsupported-media-type', 'The body must be application/json.');
    }
    const body = parseOnboardingBody(request.body);
    if (!body.ok) throw new ProblemException('invalid-body', body.detail);

    const payload: TimezoneSetRequestDto = { agent_id: owner.agent_id, reporting_timezone: body.reporting_timezone };
    const problems: ServiceProblems = {
      service: 'timezone-settings',
      subject: RpcSubjects.timezoneSet,
      requestId: request.id,
      logger: this.logger,
      unavailable: { slug: 'settings-unavailable', detail: UNAVAILABLE, retryAfterSeconds: SETTINGS_RETRY_AFTER_SECONDS },
      invalid: { slug: 'invalid-body', fallback: 'The body is not valid.' },
    };
    const answer = await askService(
      requestRpc<TimezoneSetResult>(this.nats, RpcSubjects.timezoneSet, payload, { timeoutMs: this.env.TIMEZONE_REQUEST_TIMEOUT_MS, requestId: String(request.id) }),
      problems,
    );
    void reply.header('Cache-Control', 'no-store');
    if (answer.ok) {
      const { agent_id, reporting_timezone, updated_at } = answer.result;
      return { agent_id, reporting_timezone, updated_at };
    }
    throw serviceErrorProblem(answer.error, problems);
  }
}
