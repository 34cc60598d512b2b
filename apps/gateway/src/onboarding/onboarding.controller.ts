import { Body, Controller, HttpCode, Inject, Patch, Req, Res } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, type TimezoneSetRequestDto, type TimezoneSetResult } from '#libs/contracts';
import { withRequestId } from '#libs/nats';
import { IdTokenRoute } from '../auth/authenticated-route.decorator.js';
import { Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import { NOT_JSON_RESPONSE, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { OnboardingSettingsDto, UpdateOnboardingRequestDto } from './onboarding.dto.js';

const { unavailable: UNAVAILABLE } = DOWNSTREAM.timezoneSettings;

/**
 * PATCH /agent/update-onboarding: the platform owner sets the reporting timezone. Order of
 * checks: ID token and owner (401), account (403), media type (415, RawInputGuard), body (422,
 * UpdateOnboardingRequestDto); then timezone-settings is asked over NATS (503 when it does not
 * answer in time: RpcCallFilter).
 */
@ApiTags('onboarding')
@ApiExtraModels(ProblemDto, OnboardingSettingsDto)
@Controller()
export class OnboardingController {
  constructor(@Inject(DOWNSTREAM.timezoneSettings.client) private readonly timezoneSettings: ClientProxy) {}

  @Patch('agent/update-onboarding')
  @HttpCode(200)
  @IdTokenRoute()
  @ApiOperation({
    operationId: 'updateOnboarding',
    summary: 'Set the reporting timezone of the platform',
    description:
      'The signed-in platform owner (identity-provider ID token, not the API key) sets the IANA timezone from which the `today` period starts. ' +
      'The next completed report uses it and names it in `timezone`; rolling windows (1d, 7d, 30d, 90d) stay UTC. Setting the value already in force changes nothing.',
  })
  @ApiOkResponse({ description: 'The timezone in force.', type: OnboardingSettingsDto })
  @NOT_JSON_RESPONSE
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
      settings: { summary: 'Settings unavailable', value: problemExample(UNAVAILABLE.slug, UNAVAILABLE.detail) },
    }),
  )
  async updateOnboarding(@Owner() owner: OwnerPrincipal, @Body() body: UpdateOnboardingRequestDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<OnboardingSettingsDto> {
    const payload: TimezoneSetRequestDto = { agent_id: owner.agent_id, reporting_timezone: body.reporting_timezone };
    const { agent_id, reporting_timezone, updated_at } = await firstValueFrom(
      this.timezoneSettings.send<TimezoneSetResult>(RpcSubjects.timezoneSet, withRequestId(payload, String(request.id))),
    );
    void reply.header('Cache-Control', 'no-store');
    return { agent_id, reporting_timezone, updated_at };
  }
}
