import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { RequestId } from '../http/request-id.decorator.js';
import { ApiKeyRoute } from '../auth/authenticated-route.decorator.js';
import { Principal, type PlatformPrincipal } from '../auth/principal.js';
import { BreakdownQueryDto } from './breakdown-query.dto.js';
import { ReportQueryDto } from './report-query.dto.js';
import { BreakdownResponses, ReportResponses, SeriesResponses } from './reporting-responses.js';
import { ReportReply, SeriesReply } from './reporting-reply.interceptor.js';
import { ReportingService, type SeriesCsvFile } from './reporting.service.js';
import { SeriesQueryDto } from './series-query.dto.js';

/**
 * GET /agent/reporting, GET /agent/reporting/series and GET /agent/reporting/breakdown, with the platform API key: its traffic
 * (live key → live, test key → test). Order of checks (DESIGN §5): the guard answers 401/403
 * first, then the query is validated (422: RawInputGuard, then the query DTO), then
 * reporting-projection is asked over NATS request/reply (ReportingService; its failures:
 * RpcCallFilter).
 */
@ApiTags('reporting')
@Controller('agent/reporting')
export class ReportingController {
  constructor(private readonly reporting: ReportingService) {}

  @Get()
  @ApiKeyRoute()
  @ApiOperation({
    operationId: 'getReport',
    summary: 'Performance totals of the calling platform',
    description:
      'Totals (exposures, clicks, engagements, conversions, net earnings) of the platform that owns the API key, over the requested period. ' +
      'Reports are published in the background about once a minute; processed_through tells how far processing has reached. ' +
      'A production key reports live traffic, a test key test traffic. Checks run in this order: API key (401), account (403), query (422).',
  })
  @ReportResponses('time_range')
  @ReportReply()
  getReport(@Principal() principal: PlatformPrincipal, @Query() query: ReportQueryDto, @RequestId() requestId: string): Promise<Buffer> {
    return this.reporting.report({ agent_id: principal.agent_id, traffic: principal.traffic, time_range: query.time_range }, requestId);
  }

  @Get('series')
  @ApiKeyRoute()
  @ApiOperation({
    operationId: 'getReportSeries',
    summary: 'The report of the calling platform by hour or day',
    description:
      'The figures of GET /agent/reporting for the same period and traffic, in hourly or daily buckets of the platform reporting timezone (local midnights, local hour starts; ' +
      'a DST day is a bucket of 23 or 25 hours), the first and last clipped to the period. Summed over the buckets, each figure equals the Report with the same processed_through. ' +
      'As JSON, or as CSV with format=csv. Checks run in this order: API key (401), account (403), query (422).',
  })
  @ApiProduces('application/json', 'text/csv')
  @SeriesResponses('time_range, granularity, format')
  @SeriesReply()
  getSeries(@Principal() principal: PlatformPrincipal, @Query() query: SeriesQueryDto, @RequestId() requestId: string): Promise<Buffer | SeriesCsvFile> {
    const scope = { agent_id: principal.agent_id, traffic: principal.traffic, time_range: query.time_range, granularity: query.granularity };
    return this.reporting.series(scope, query.format, requestId);
  }

  @Get('breakdown')
  @ApiKeyRoute()
  @ApiOperation({
    operationId: 'getReportBreakdown',
    summary: 'The report of the calling platform by ad or product',
    description:
      'The figures of GET /agent/reporting for the same period and traffic, split by the ad or product of each recommendation (that of its generated event; null, "unattributed", until it arrives): ' +
      'the first limit ids by the sort figure (descending, ties by id ascending) and other, the figures of every id not listed. Summed over rows and other, each figure equals the Report with the same processed_through. ' +
      'As JSON, or as CSV with format=csv. Checks run in this order: API key (401), account (403), query (422).',
  })
  @ApiProduces('application/json', 'text/csv')
  @BreakdownResponses('time_range, by, limit, sort, format')
  @SeriesReply()
  getBreakdown(@Principal() principal: PlatformPrincipal, @Query() query: BreakdownQueryDto, @RequestId() requestId: string): Promise<Buffer | SeriesCsvFile> {
    return this.reporting.breakdown(principal, query, requestId);
  }
}
