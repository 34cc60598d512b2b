import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiUnprocessableEntityResponse, getSchemaPath } from '@nestjs/swagger';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { ProblemDto } from '../http/problem.dto.js';
import { BREAKDOWN_CSV_EXAMPLE, BREAKDOWN_EXAMPLE, BreakdownFiguresDto, BreakdownRowDto, ReportBreakdownDto } from './breakdown.dto.js';
import { PreparingReportDto } from './reporting.dto.js';
import { NO_STORE_DOC, PREPARING, REPEATED, TRAFFIC_EXAMPLES, UNAVAILABLE_RESPONSE, UNSUPPORTED_RANGE } from './reporting-responses.js';

/** 200 (JSON or CSV)/202/422/503 of a breakdown route (DESIGN §9); `traffic` when the caller chooses the traffic (the owner's route). */
export function BreakdownResponses(parameters: string, options: { traffic?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDto, ReportBreakdownDto, BreakdownRowDto, BreakdownFiguresDto, PreparingReportDto),
    ApiOkResponse({
      description:
        'The breakdown as JSON, or with format=csv as an attachment named <agent_id>-<time_range>-by-<by>.csv: the header line ' +
        'id,exposures,clicks,engagements,conversions,earnings_micros, one line per row (the unattributed row with an empty id), then other with id (other); RFC 4180 with CRLF line ends.',
      headers: {
        ...REQUEST_ID_HEADER_DOC,
        ...NO_STORE_DOC,
        'Content-Disposition': {
          description: 'With format=csv only: attachment; filename="<agent_id>-<time_range>-by-<by>.csv".',
          schema: { type: 'string', example: 'attachment; filename="agent_7f3c2a-7d-by-ad.csv"' },
        },
      },
      content: {
        'application/json': { schema: { $ref: getSchemaPath(ReportBreakdownDto) }, example: BREAKDOWN_EXAMPLE },
        'text/csv': { schema: { type: 'string' }, example: BREAKDOWN_CSV_EXAMPLE },
      },
    }),
    PREPARING,
    ApiUnprocessableEntityResponse(
      problemResponse(`by is missing, a parameter has an unsupported value, is repeated or empty, or a parameter other than ${parameters} is present.`, {
        by: { summary: 'Missing or unsupported by', value: problemExample('invalid-query', 'Unsupported by "campaign": ad or product.') },
        limit: { summary: 'limit out of range', value: problemExample('invalid-query', 'limit must be an integer from 1 to 100; got "500".') },
        sort: { summary: 'Unsupported sort', value: problemExample('invalid-query', 'Unsupported sort "engagements": exposures, clicks, conversions, earnings_micros.') },
        unsupported_value: UNSUPPORTED_RANGE,
        ...(options.traffic ? TRAFFIC_EXAMPLES : {}),
        repeated: REPEATED,
        other_parameter: { summary: 'Another query parameter', value: problemExample('invalid-query', `Unsupported query parameter "agent_id": supported parameters: ${parameters}.`) },
      }),
    ),
    UNAVAILABLE_RESPONSE,
  );
}
