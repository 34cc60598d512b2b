import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PROBLEM_TYPE_BASE, type ProblemDetails } from './problem.js';

/** The error body of every gateway response (RFC 9457), for the OpenAPI document. */
@ApiSchema({
  name: 'Problem',
  description: 'RFC 9457 problem details, sent as application/problem+json. Never contains a stack trace.',
})
export class ProblemDto implements ProblemDetails {
  @ApiProperty({
    type: 'string',
    format: 'uri',
    description: `Stable problem type URI (${PROBLEM_TYPE_BASE}<slug>), or about:blank for a status without a specific type.`,
    example: `${PROBLEM_TYPE_BASE}invalid-api-key`,
  })
  type: string;

  @ApiProperty({ type: 'string', description: 'Short summary of the problem type; the same for every occurrence.', example: 'Invalid or missing API key' })
  title: string;

  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status code of the response.', example: 401 })
  status: number;

  @ApiProperty({ type: 'string', description: 'What went wrong in this occurrence and how to fix it.', example: 'Send the platform API key as "Authorization: Bearer <API_KEY>".' })
  detail: string;
}
