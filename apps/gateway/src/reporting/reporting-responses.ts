import { applyDecorators } from '@nestjs/common';
import { ApiAcceptedResponse, ApiExtraModels, ApiOkResponse, ApiServiceUnavailableResponse, ApiUnprocessableEntityResponse, getSchemaPath } from '@nestjs/swagger';
import { TIME_RANGES } from '#libs/contracts';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { PREPARING_EXAMPLE, PreparingReportDto, REPORT_EXAMPLE, ReportDto } from './reporting.dto.js';
import { PREPARING_RETRY_AFTER_SECONDS } from './reporting.service.js';
import { ReportSeriesDto, SERIES_CSV_EXAMPLE, SERIES_EXAMPLE, SeriesBucketDto } from './series.dto.js';
import { BREAKDOWN_CSV_EXAMPLE, BREAKDOWN_EXAMPLE, BreakdownFiguresDto, BreakdownRowDto, ReportBreakdownDto } from './breakdown.dto.js';

/**
 * The OpenAPI description of the answers of the reporting routes (DESIGN §5, §7, §9), shared by the
 * API-key routes and the owner's dashboard routes, which answer alike.
 */

const { unavailable: UNAVAILABLE } = DOWNSTREAM.reporting;

const RETRY_AFTER_DOC = (seconds: number) => ({
  'Retry-After': { description: 'Seconds to wait before requesting again.', schema: { type: 'integer', example: seconds } },
});
const NO_STORE_DOC = { 'Cache-Control': { description: 'Reports are private and change every minute.', schema: { type: 'string', example: 'private, no-store' } } };

const PREPARING = ApiAcceptedResponse({
  description: `The first report of this platform, traffic and period is being prepared: wait Retry-After (${PREPARING_RETRY_AFTER_SECONDS} s) and request again. The body carries metadata only, no totals.`,
  type: PreparingReportDto,
  headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC, ...RETRY_AFTER_DOC(PREPARING_RETRY_AFTER_SECONDS) },
  example: PREPARING_EXAMPLE,
});

const UNAVAILABLE_RESPONSE = ApiServiceUnavailableResponse(
  problemResponse(
    'Reporting (or authentication) is temporarily unavailable, or the instance is shutting down. Retry after Retry-After seconds.',
    {
      reporting: { summary: 'Reporting unavailable', value: problemExample(UNAVAILABLE.slug, UNAVAILABLE.detail) },
      authentication: { summary: 'Authentication unavailable', value: problemExample('service-unavailable', 'Authentication is temporarily unavailable; retry later.') },
    },
    RETRY_AFTER_DOC(UNAVAILABLE.retryAfterSeconds),
  ),
);

const TRAFFIC_EXAMPLES = {
  traffic: { summary: 'Unsupported traffic', value: problemExample('invalid-query', 'Unsupported traffic "prod": live or test.') },
};
const UNSUPPORTED_RANGE = {
  summary: 'Unsupported time_range',
  value: problemExample('invalid-query', `Unsupported time_range "2w". Allowed values of time_range: ${TIME_RANGES.join(', ')}.`),
};
const REPEATED = { summary: 'A repeated parameter', value: problemExample('invalid-query', 'time_range must be given at most once.') };

type ProblemExamples = Parameters<typeof problemResponse>[1];

/** What the routes accept from the caller: the parameters named in a 422; traffic when the caller chooses it (the owner's routes). */
interface RouteQuery {
  parameters: string;
  traffic?: boolean;
}

/** The answers every reporting route shares: `ok`, 202 while the first report is prepared, 422 (`own` examples, then the shared ones), 503. */
function ReportingResponses(models: Function[], ok: MethodDecorator, query: RouteQuery, problems: string, own: ProblemExamples, otherParameter?: string): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDto, ...models, PreparingReportDto),
    ok,
    PREPARING,
    ApiUnprocessableEntityResponse(
      problemResponse(problems, {
        ...own,
        unsupported_value: UNSUPPORTED_RANGE,
        ...(query.traffic ? TRAFFIC_EXAMPLES : {}),
        repeated: REPEATED,
        other_parameter: {
          summary: 'Another query parameter',
          value: problemExample('invalid-query', otherParameter ?? `Unsupported query parameter "agent_id": supported parameters: ${query.parameters}.`),
        },
      }),
    ),
    UNAVAILABLE_RESPONSE,
  );
}

/** The 200 of a route answering JSON, or with format=csv a CSV attachment (SeriesReply). */
function JsonOrCsvResponse(what: string, file: { name: string; example: string; lines: string }, schema: Function, example: object, csvExample: string): MethodDecorator {
  return ApiOkResponse({
    description: `The ${what} as JSON, or with format=csv as an attachment named ${file.name}: the header line ${file.lines}`,
    headers: {
      ...REQUEST_ID_HEADER_DOC,
      ...NO_STORE_DOC,
      'Content-Disposition': {
        description: `With format=csv only: attachment; filename="${file.name}".`,
        schema: { type: 'string', example: `attachment; filename="${file.example}"` },
      },
    },
    content: {
      'application/json': { schema: { $ref: getSchemaPath(schema) }, example },
      'text/csv': { schema: { type: 'string' }, example: csvExample },
    },
  });
}

/** 200/202/422/503 of a report route; `traffic` when the caller chooses the traffic (the owner's route). */
export function ReportResponses(parameters: string, options: { traffic?: boolean } = {}): MethodDecorator {
  const ok = ApiOkResponse({
    description: 'The report. A stale status is not an error: show processed_through and retry later.',
    type: ReportDto,
    headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC },
    example: REPORT_EXAMPLE,
  });
  const problems = `A parameter has an unsupported value, is repeated or empty, or a parameter other than ${parameters} is present.`;
  const otherParameter = options.traffic ? undefined : 'Unsupported query parameter "agent_id": time_range is the only supported parameter.';
  return ReportingResponses([ReportDto], ok, { parameters, ...options }, problems, {}, otherParameter);
}

/** 200 (JSON or CSV)/202/422/503 of a series route. */
export function SeriesResponses(parameters: string, options: { traffic?: boolean } = {}): MethodDecorator {
  const ok = JsonOrCsvResponse(
    'series',
    {
      name: '<agent_id>-<time_range>-<granularity>.csv',
      example: 'agent_7f3c2a-7d-day.csv',
      lines: 'bucket_start,bucket_end,exposures,clicks,engagements,conversions,earnings_micros, then one line per bucket (UTC timestamps), RFC 4180 with CRLF line ends.',
    },
    ReportSeriesDto,
    SERIES_EXAMPLE,
    SERIES_CSV_EXAMPLE,
  );
  const problems = `A parameter has an unsupported value, is repeated or empty, granularity is hour with 30d, 90d or all, or a parameter other than ${parameters} is present.`;
  return ReportingResponses([ReportSeriesDto, SeriesBucketDto], ok, { parameters, ...options }, problems, {
    hour_too_long: {
      summary: 'Hourly buckets for a long range',
      value: problemExample('invalid-query', 'granularity hour is available for time_range today, 1d, 7d only; use day for 30d.'),
    },
    granularity: { summary: 'Unsupported granularity', value: problemExample('invalid-query', 'Unsupported granularity "week": hour or day.') },
    format: { summary: 'Unsupported format', value: problemExample('invalid-query', 'Unsupported format "xlsx": json or csv.') },
  });
}

/** 200 (JSON or CSV)/202/422/503 of a breakdown route (DESIGN §9). */
export function BreakdownResponses(parameters: string, options: { traffic?: boolean } = {}): MethodDecorator {
  const ok = JsonOrCsvResponse(
    'breakdown',
    {
      name: '<agent_id>-<time_range>-by-<by>.csv',
      example: 'agent_7f3c2a-7d-by-ad.csv',
      lines:
        'id,exposures,clicks,engagements,conversions,earnings_micros, one line per row (the unattributed row with an empty id), then other with id (other); RFC 4180 with CRLF line ends.',
    },
    ReportBreakdownDto,
    BREAKDOWN_EXAMPLE,
    BREAKDOWN_CSV_EXAMPLE,
  );
  const problems = `by is missing, a parameter has an unsupported value, is repeated or empty, or a parameter other than ${parameters} is present.`;
  return ReportingResponses([ReportBreakdownDto, BreakdownRowDto, BreakdownFiguresDto], ok, { parameters, ...options }, problems, {
    by: { summary: 'Missing or unsupported by', value: problemExample('invalid-query', 'Unsupported by "campaign": ad or product.') },
    limit: { summary: 'limit out of range', value: problemExample('invalid-query', 'limit must be an integer from 1 to 100; got "500".') },
    sort: { summary: 'Unsupported sort', value: problemExample('invalid-query', 'Unsupported sort "engagements": exposures, clicks, conversions, earnings_micros.') },
  });
}
