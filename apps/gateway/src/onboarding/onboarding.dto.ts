import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'UpdateOnboardingRequest', description: 'The only field; any other field is refused with 422.' })
export class UpdateOnboardingRequestDto {
  @ApiProperty({
    type: 'string',
    description: 'IANA time zone name (a zone or a link of the tz database) from which the `today` period of reports starts. Offsets such as +05:00 are not accepted.',
    example: 'Asia/Kathmandu',
  })
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
