import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { ApiAcceptedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, TIME_RANGES, type ReportRequestDto } from '#libs/contracts';
import { withRequestId, type RawJson } from '#libs/nats';
import { ApiKeyRoute } from '../auth/authenticated-route.decorator.js';
import { Principal, type PlatformPrincipal } from '../auth/principal.js';
import { REQUEST_ID_HEADER_DOC, problemExample, problemResponse } from '../docs/problem-responses.js';
import { DOWNSTREAM } from '../http/downstream-services.js';
import { ProblemDto } from '../http/problem.dto.js';
import { ReportQueryDto } from './report-query.dto.js';
import { PREPARING_EXAMPLE, PreparingReportDto, REPORT_EXAMPLE, ReportDto } from './reporting.dto.js';

/** Seconds a client waits while the first report of a scope is prepared (SPEC Limits). */
export const PREPARING_RETRY_AFTER_SECONDS = 60;
const { unavailable: UNAVAILABLE } = DOWNSTREAM.reporting;
/**
 * The member of a report still being prepared. A report (Report or PreparingReport) is a flat
 * JSON object whose string values have their quotes escaped, so these bytes can only be its
 * status: the reply is forwarded as reporting-projection serialized it, not parsed and
 * serialized again (about 3 µs a request on the read hot path).
 */
const PREPARING = Buffer.from('"status":"preparing"');

// --- OpenAPI description of the responses (DESIGN §5); the handler below is the behaviour. ---

const RETRY_AFTER_DOC = (seconds: number) => ({
  'Retry-After': { description: 'Seconds to wait before requesting again.', schema: { type: 'integer', example: seconds } },
});
const NO_STORE_DOC = { 'Cache-Control': { description: 'Reports are private and change every minute.', schema: { type: 'string', example: 'private, no-store' } } };

/**
 * GET /agent/reporting. Order of checks (DESIGN §5): the guard answers 401/403 first, then the
 * query is validated (422: RawInputGuard, then the ReportQueryDto), then reporting-projection
 * is asked over NATS request/reply (its failures: RpcCallFilter).
 */
@ApiTags('reporting')
@ApiExtraModels(ProblemDto, ReportDto, PreparingReportDto)
@Controller()
export class ReportingController {
  constructor(@Inject(DOWNSTREAM.reporting.client) private readonly reporting: ClientProxy) {}

  @Get('agent/reporting')
  @ApiKeyRoute()
  @ApiOperation({
    operationId: 'getReport',
    summary: 'Performance totals of the calling platform',
    description:
      'Totals (exposures, clicks, engagements, conversions, net earnings) of the platform that owns the API key, over the requested period. ' +
      'Reports are published in the background about once a minute; processed_through tells how far processing has reached. ' +
      'A production key reports live traffic, a test key test traffic. Checks run in this order: API key (401), account (403), query (422).',
  })
  @ApiOkResponse({
    description: 'The report. A stale status is not an error: show processed_through and retry later.',
    type: ReportDto,
    headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC },
    example: REPORT_EXAMPLE,
  })
  @ApiAcceptedResponse({
    description: `The first report of this platform, traffic and period is being prepared: wait Retry-After (${PREPARING_RETRY_AFTER_SECONDS} s) and request again. The body carries metadata only, no totals.`,
    type: PreparingReportDto,
    headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC, ...RETRY_AFTER_DOC(PREPARING_RETRY_AFTER_SECONDS) },
    example: PREPARING_EXAMPLE,
  })
  @ApiUnprocessableEntityResponse(
    problemResponse('time_range has an unsupported value, is repeated or empty, or another query parameter is present.', {
      unsupported_value: {
        summary: 'Unsupported time_range',
        value: problemExample('invalid-query', `Unsupported time_range "2w". Allowed values of time_range: ${TIME_RANGES.join(', ')}.`),
      },
      other_parameter: {
        summary: 'Another query parameter',
        value: problemExample('invalid-query', 'Unsupported query parameter "agent_id": time_range is the only supported parameter.'),
      },
    }),
  )
  @ApiServiceUnavailableResponse(
    problemResponse(
      'Reporting (or authentication) is temporarily unavailable, or the instance is shutting down. Retry after Retry-After seconds.',
      {
        reporting: { summary: 'Reporting unavailable', value: problemExample(UNAVAILABLE.slug, UNAVAILABLE.detail) },
        authentication: {
          summary: 'Authentication unavailable',
          value: problemExample('service-unavailable', 'Authentication is temporarily unavailable; retry later.'),
        },
      },
      RETRY_AFTER_DOC(UNAVAILABLE.retryAfterSeconds),
    ),
  )
  async getReport(@Principal() principal: PlatformPrincipal, @Query() query: ReportQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    const payload: ReportRequestDto = { agent_id: principal.agent_id, traffic: principal.traffic, time_range: query.time_range };
    const { bytes } = await firstValueFrom(this.reporting.send<RawJson>(RpcSubjects.reportGet, withRequestId(payload, String(request.id))));
    const report = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
    // Reports are per platform and change every minute: no shared caches.
    void reply.header('Cache-Control', 'private, no-store').type('application/json; charset=utf-8');
    if (report.includes(PREPARING)) void reply.status(202).header('Retry-After', String(PREPARING_RETRY_AFTER_SECONDS));
    return report;
  }
}
