import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import { IsIanaTimezone, IsPresent, shownValue } from '#libs/contracts';

const HINT = 'Send {"reporting_timezone": "<IANA time zone name>"}, e.g. {"reporting_timezone": "Asia/Kathmandu"}.';

/** The body of PATCH /agent/update-onboarding: exactly `{reporting_timezone}`, an IANA zone or link. */
@ApiSchema({ name: 'UpdateOnboardingRequest', description: 'The only field; any other field is refused with 422.' })
export class UpdateOnboardingRequestDto {
  @ApiProperty({
    type: 'string',
    description: 'IANA time zone name (a zone or a link of the tz database) from which the `today` period of reports starts. Offsets such as +05:00 are not accepted.',
    example: 'Asia/Kathmandu',
  })
  // Checked in this order; the first failure is the reason.
  @applyDecorators(
    IsPresent(HINT),
    IsString({ message: `$property must be a string. ${HINT}` }),
    IsIanaTimezone({
      message: ({ value }) =>
        `${shownValue(value)} is not an IANA time zone name. Use a tz database name such as "America/New_York" or "UTC"; offsets like "+05:00" are not accepted.`,
    }),
  )
  reporting_timezone: string;
}

@ApiSchema({ name: 'OnboardingSettings', description: 'The settings of the platform after the update.' })
export class OnboardingSettingsDto {
  @ApiProperty({ type: 'string', description: 'The platform owned by the signed-in account.', example: 'agent_demo' })
  agent_id: string;

  @ApiProperty({ type: 'string', description: 'The reporting timezone now in force; the next completed report uses it.', example: 'Asia/Kathmandu' })
  reporting_timezone: string;

  @ApiProperty({ type: 'string', format: 'date-time', description: 'When the reporting timezone last changed (unchanged when the same value is set again).', example: '2026-11-26T03:10:00.000Z' })
  updated_at: string;
}
