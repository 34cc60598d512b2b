import { Body, Controller, Header, HttpCode, Patch } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { IdTokenRoute } from '../auth/authenticated-route.decorator.js';
import { Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import { NOT_JSON_RESPONSE, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { RequestId } from '../http/request-id.decorator.js';
import { OnboardingSettingsDto, UpdateOnboardingRequestDto } from './onboarding.dto.js';
import { OnboardingService } from './onboarding.service.js';

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
  constructor(private readonly onboarding: OnboardingService) {}

  @Patch('agent/update-onboarding')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
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
  updateOnboarding(@Owner() owner: OwnerPrincipal, @Body() body: UpdateOnboardingRequestDto, @RequestId() requestId: string): Promise<OnboardingSettingsDto> {
    return this.onboarding.setReportingTimezone(owner.agent_id, body.reporting_timezone, requestId);
  }
}
