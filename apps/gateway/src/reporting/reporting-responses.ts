import { applyDecorators } from '@nestjs/common';
import { ApiAcceptedResponse, ApiExtraModels, ApiOkResponse, ApiServiceUnavailableResponse, ApiUnprocessableEntityResponse, getSchemaPath } from '@nestjs/swagger';
import { TIME_RANGES } from '#libs/contracts';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { PREPARING_EXAMPLE, PreparingReportDto, REPORT_EXAMPLE, ReportDto } from './reporting.dto.js';
import { PREPARING_RETRY_AFTER_SECONDS } from './reporting.service.js';
import { ReportSeriesDto, SERIES_CSV_EXAMPLE, SERIES_EXAMPLE, SeriesBucketDto } from './series.dto.js';

/**
 * The OpenAPI description of the answers of the reporting routes (DESIGN §5, §7), shared by the
 * API-key routes and the owner's dashboard routes, which answer alike.
 */

const { unavailable: UNAVAILABLE } = DOWNSTREAM.reporting;

const RETRY_AFTER_DOC = (seconds: number) => ({
  'Retry-After': { description: 'Seconds to wait before requesting again.', schema: { type: 'integer', example: seconds } },
});
export const NO_STORE_DOC = { 'Cache-Control': { description: 'Reports are private and change every minute.', schema: { type: 'string', example: 'private, no-store' } } };

export const PREPARING = ApiAcceptedResponse({
  description: `The first report of this platform, traffic and period is being prepared: wait Retry-After (${PREPARING_RETRY_AFTER_SECONDS} s) and request again. The body carries metadata only, no totals.`,
  type: PreparingReportDto,
  headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC, ...RETRY_AFTER_DOC(PREPARING_RETRY_AFTER_SECONDS) },
  example: PREPARING_EXAMPLE,
});

export const UNAVAILABLE_RESPONSE = ApiServiceUnavailableResponse(
  problemResponse(
    'Reporting (or authentication) is temporarily unavailable, or the instance is shutting down. Retry after Retry-After seconds.',
    {
      reporting: { summary: 'Reporting unavailable', value: problemExample(UNAVAILABLE.slug, UNAVAILABLE.detail) },
      authentication: { summary: 'Authentication unavailable', value: problemExample('service-unavailable', 'Authentication is temporarily unavailable; retry later.') },
    },
    RETRY_AFTER_DOC(UNAVAILABLE.retryAfterSeconds),
  ),
);

export const TRAFFIC_EXAMPLES = {
  traffic: { summary: 'Unsupported traffic', value: problemExample('invalid-query', 'Unsupported traffic "prod": live or test.') },
};
export const UNSUPPORTED_RANGE = {
  summary: 'Unsupported time_range',
  value: problemExample('invalid-query', `Unsupported time_range "2w". Allowed values of time_range: ${TIME_RANGES.join(', ')}.`),
};
export const REPEATED = { summary: 'A repeated parameter', value: problemExample('invalid-query', 'time_range must be given at most once.') };

/** 200/202/422/503 of a report route; `traffic` when the caller chooses the traffic (the owner's route). */
export function ReportResponses(parameters: string, options: { traffic?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDto, ReportDto, PreparingReportDto),
    ApiOkResponse({
      description: 'The report. A stale status is not an error: show processed_through and retry later.',
      type: ReportDto,
      headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC },
      example: REPORT_EXAMPLE,
    }),
    PREPARING,
    ApiUnprocessableEntityResponse(
      problemResponse(`A parameter has an unsupported value, is repeated or empty, or a parameter other than ${parameters} is present.`, {
        unsupported_value: UNSUPPORTED_RANGE,
        ...(options.traffic ? TRAFFIC_EXAMPLES : {}),
        repeated: REPEATED,
        other_parameter: {
          summary: 'Another query parameter',
          value: problemExample(
            'invalid-query',
            options.traffic ? `Unsupported query parameter "agent_id": supported parameters: ${parameters}.` : 'Unsupported query parameter "agent_id": time_range is the only supported parameter.',
          ),
        },
      }),
    ),
    UNAVAILABLE_RESPONSE,
  );
}

/** 200 (JSON or CSV)/202/422/503 of a series route. */
export function SeriesResponses(parameters: string, options: { traffic?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDto, ReportSeriesDto, SeriesBucketDto, PreparingReportDto),
    ApiOkResponse({
      description:
        'The series as JSON, or with format=csv as an attachment named <agent_id>-<time_range>-<granularity>.csv: the header line ' +
        'bucket_start,bucket_end,exposures,clicks,engagements,conversions,earnings_micros, then one line per bucket (UTC timestamps), RFC 4180 with CRLF line ends.',
      headers: {
        ...REQUEST_ID_HEADER_DOC,
        ...NO_STORE_DOC,
        'Content-Disposition': {
          description: 'With format=csv only: attachment; filename="<agent_id>-<time_range>-<granularity>.csv".',
          schema: { type: 'string', example: 'attachment; filename="agent_7f3c2a-7d-day.csv"' },
        },
      },
      content: {
        'application/json': { schema: { $ref: getSchemaPath(ReportSeriesDto) }, example: SERIES_EXAMPLE },
        'text/csv': { schema: { type: 'string' }, example: SERIES_CSV_EXAMPLE },
      },
    }),
    PREPARING,
    ApiUnprocessableEntityResponse(
      problemResponse(
        `A parameter has an unsupported value, is repeated or empty, granularity is hour with 30d, 90d or all, or a parameter other than ${parameters} is present.`,
        {
          hour_too_long: {
            summary: 'Hourly buckets for a long range',
            value: problemExample('invalid-query', 'granularity hour is available for time_range today, 1d, 7d only; use day for 30d.'),
          },
          granularity: { summary: 'Unsupported granularity', value: problemExample('invalid-query', 'Unsupported granularity "week": hour or day.') },
          format: { summary: 'Unsupported format', value: problemExample('invalid-query', 'Unsupported format "xlsx": json or csv.') },
          unsupported_value: UNSUPPORTED_RANGE,
          ...(options.traffic ? TRAFFIC_EXAMPLES : {}),
          repeated: REPEATED,
          other_parameter: { summary: 'Another query parameter', value: problemExample('invalid-query', `Unsupported query parameter "agent_id": supported parameters: ${parameters}.`) },
        },
      ),
    ),
    UNAVAILABLE_RESPONSE,
  );
}
