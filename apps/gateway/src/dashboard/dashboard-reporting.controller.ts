import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { RequestId } from '../http/request-id.decorator.js';
import { IdTokenRoute } from '../auth/authenticated-route.decorator.js';
import { Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import { BreakdownResponses, ReportResponses, SeriesResponses } from '../reporting/reporting-responses.js';
import { ReportReply, SeriesReply } from '../reporting/reporting-reply.interceptor.js';
import { ReportingService, type SeriesCsvFile } from '../reporting/reporting.service.js';
import { OwnerBreakdownQueryDto, OwnerReportQueryDto, OwnerSeriesQueryDto } from './dashboard-query.dto.js';

/**
 * The owner's reporting (DESIGN §7): GET /agent/dashboard/reporting and
 * /agent/dashboard/reporting/series answer exactly what /agent/reporting and
 * /agent/reporting/series answer for a key of the chosen traffic (the same ReportingService),
 * with the ID token of the platform's owner (any role; an API key here is a 401, a suspended
 * platform a 403) under the per-owner rate limit. The platform comes from the token only.
 */
@ApiTags('dashboard')
@Controller('agent/dashboard/reporting')
export class DashboardReportingController {
  constructor(private readonly reporting: ReportingService) {}

  @Get()
  @IdTokenRoute()
  @ApiOperation({
    operationId: 'getOwnerReport',
    summary: 'The report of the signed-in owner\'s platform',
    description:
      'Exactly what GET /agent/reporting answers for a key of the chosen traffic (live by default). Checks run in this order: ID token (401), account (403), query (422).',
  })
  @ReportResponses('time_range, traffic', { traffic: true })
  @ReportReply()
  getReport(@Owner() owner: OwnerPrincipal, @Query() query: OwnerReportQueryDto, @RequestId() requestId: string): Promise<Buffer> {
    return this.reporting.report({ agent_id: owner.agent_id, traffic: query.traffic, time_range: query.time_range }, requestId);
  }

  @Get('series')
  @IdTokenRoute()
  @ApiOperation({
    operationId: 'getOwnerReportSeries',
    summary: 'The report of the signed-in owner\'s platform by hour or day',
    description:
      'Exactly what GET /agent/reporting/series answers for a key of the chosen traffic (live by default), as JSON or as CSV (format=csv). ' +
      'Checks run in this order: ID token (401), account (403), query (422).',
  })
  @ApiProduces('application/json', 'text/csv')
  @SeriesResponses('time_range, granularity, format, traffic', { traffic: true })
  @SeriesReply()
  getSeries(@Owner() owner: OwnerPrincipal, @Query() query: OwnerSeriesQueryDto, @RequestId() requestId: string): Promise<Buffer | SeriesCsvFile> {
    const scope = { agent_id: owner.agent_id, traffic: query.traffic, time_range: query.time_range, granularity: query.granularity };
    return this.reporting.series(scope, query.format, requestId);
  }

  @Get('breakdown')
  @IdTokenRoute()
  @ApiOperation({
    operationId: 'getOwnerReportBreakdown',
    summary: 'The report of the signed-in owner\'s platform by ad or product',
    description:
      'Exactly what GET /agent/reporting/breakdown answers for a key of the chosen traffic (live by default), as JSON or as CSV (format=csv). ' +
      'Checks run in this order: ID token (401), account (403), query (422).',
  })
  @ApiProduces('application/json', 'text/csv')
  @BreakdownResponses('time_range, by, limit, sort, format, traffic', { traffic: true })
  @SeriesReply()
  getBreakdown(@Owner() owner: OwnerPrincipal, @Query() query: OwnerBreakdownQueryDto, @RequestId() requestId: string): Promise<Buffer | SeriesCsvFile> {
    return this.reporting.breakdown({ agent_id: owner.agent_id, traffic: query.traffic }, query, requestId);
  }
}
