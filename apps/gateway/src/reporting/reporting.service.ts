import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { RpcSubjects, defaultGranularity, type BreakdownRequestDto, type ReportBreakdown, type ReportRequestDto, type ReportSeries, type SeriesGranularity, type SeriesRequestDto, type TimeRange, type Traffic } from '#libs/contracts';
import { RawJson } from '#libs/nats';
import { DOWNSTREAM, replyBytes } from '../http/downstream-services.js';
import { breakdownCsv, breakdownCsvFilename } from './breakdown-csv.js';
import type { BreakdownQueryDto } from './breakdown-query.dto.js';
import type { SeriesFormat } from './series-query.dto.js';
import { seriesCsv, seriesCsvFilename } from './series-csv.js';
import { SeriesReplyCache } from './series-reply-cache.js';

/** Seconds a client waits while the first report of a scope is prepared (SPEC Limits). */
export const PREPARING_RETRY_AFTER_SECONDS = 60;

/**
 * The member of a report or series still being prepared. A reply (Report, ReportSeries or
 * PreparingReport) is JSON whose only "status" member at the top level is its status, and whose
 * string values cannot hold an unescaped quote, so these bytes can only be that status: replies
 * are forwarded as reporting-projection serialized them, not parsed and serialized again (about
 * 3 µs a request on the read hot path).
 */
const PREPARING = Buffer.from('"status":"preparing"');

/** Whether a reply (JSON bytes) is a PreparingReport: answered 202 with Retry-After (ReportingReplyInterceptor). */
export function isPreparing(body: Buffer): boolean {
  return body.includes(PREPARING);
}

/**
 * A report still being prepared (its PreparingReport bytes): not an answer the report route can
 * give yet, so it is raised and answered 202 with Retry-After by PreparingReportFilter, which
 * keeps the ready report's path free of any per-request step (docs/benchmarks/gateway-idioms.md).
 */
export class PreparingReport extends Error {
  constructor(readonly body: Buffer) {
    super('report being prepared');
    this.name = 'PreparingReport';
  }
}

/** A ready series or breakdown as CSV: the attachment's file name and its text. */
export class SeriesCsvFile {
  constructor(
    readonly filename: string,
    readonly body: string,
  ) {}
}

/** What a reporting answer is about: the platform and traffic come from the credential (a key's mode, or the owner's choice). */
export interface ReportingScope {
  agent_id: string;
  traffic: Traffic;
  time_range: TimeRange;
}

/**
 * Reports and series from reporting-projection over NATS request/reply, answered the same way
 * whoever asks (an API key, or the platform's owner for a traffic of their choice): one
 * behaviour for /agent/reporting and /agent/dashboard/reporting, and for both series routes.
 * Failures of the request/reply are RpcCallFilter's; the headers and status of the answers are
 * the routes' (`@ReportReply()`, `@SeriesReply()`).
 */
@Injectable()
export class ReportingService {
  constructor(
    @Inject(DOWNSTREAM.reporting.client) private readonly reporting: ClientProxy,
    private readonly seriesCache: SeriesReplyCache,
  ) {}

  /** The Report as JSON bytes; PreparingReport is thrown while it is being prepared. */
  async report(scope: ReportingScope, requestId: string): Promise<Buffer> {
    const payload: ReportRequestDto = { agent_id: scope.agent_id, traffic: scope.traffic, time_range: scope.time_range };
    const report = await replyBytes(this.reporting, RpcSubjects.reportGet, payload, requestId);
    if (isPreparing(report)) throw new PreparingReport(report);
    return report;
  }

  /** The series (JSON bytes, or CSV when ready and asked for) or PreparingReport; ready series through the gateway's cache (SeriesReplyCache). */
  async series(scope: ReportingScope & { granularity?: SeriesGranularity }, format: SeriesFormat, requestId: string): Promise<Buffer | SeriesCsvFile> {
    const payload: SeriesRequestDto = {
      agent_id: scope.agent_id,
      traffic: scope.traffic,
      time_range: scope.time_range,
      granularity: scope.granularity ?? defaultGranularity(scope.time_range),
    };
    const series = await this.seriesCache.fetch(payload, () => replyBytes(this.reporting, RpcSubjects.seriesGet, payload, requestId), (body) => !isPreparing(body));
    if (format === 'json' || isPreparing(series)) return series;
    const parsed = new RawJson(series).parse<ReportSeries>();
    return new SeriesCsvFile(seriesCsvFilename(parsed), seriesCsv(parsed));
  }

  /** The breakdown (JSON bytes, or CSV when ready and asked for) or PreparingReport (DESIGN §9); answered from reporting-projection's memory, so not cached here. */
  async breakdown(scope: Pick<ReportingScope, 'agent_id' | 'traffic'>, query: BreakdownQueryDto, requestId: string): Promise<Buffer | SeriesCsvFile> {
    const payload: BreakdownRequestDto = { agent_id: scope.agent_id, traffic: scope.traffic, time_range: query.time_range, by: query.by, limit: query.limit, sort: query.sort };
    const breakdown = await replyBytes(this.reporting, RpcSubjects.breakdownGet, payload, requestId);
    if (query.format === 'json' || isPreparing(breakdown)) return breakdown;
    const parsed = new RawJson(breakdown).parse<ReportBreakdown>();
    return new SeriesCsvFile(breakdownCsvFilename(parsed), breakdownCsv(parsed));
  }
}
