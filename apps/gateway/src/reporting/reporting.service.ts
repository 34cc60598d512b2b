import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, defaultGranularity, type ReportRequestDto, type ReportSeries, type SeriesGranularity, type SeriesRequestDto, type TimeRange, type Traffic } from '#libs/contracts';
import { RawJson, withRequestId } from '#libs/nats';
import { DOWNSTREAM } from '../http/downstream-services.js';
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
 * Failures of the request/reply are RpcCallFilter's.
 */
@Injectable()
export class ReportingService {
  constructor(
    @Inject(DOWNSTREAM.reporting.client) private readonly reporting: ClientProxy,
    private readonly seriesCache: SeriesReplyCache,
  ) {}

  /** The Report (200) or PreparingReport (202 + Retry-After) as JSON bytes. */
  async report(scope: ReportingScope, requestId: string, reply: FastifyReply): Promise<Buffer> {
    const payload: ReportRequestDto = { agent_id: scope.agent_id, traffic: scope.traffic, time_range: scope.time_range };
    const report = await this.ask(RpcSubjects.reportGet, payload, requestId);
    this.privateJson(reply, report);
    return report;
  }

  /** The series (200, JSON bytes or CSV) or PreparingReport (202 + Retry-After); ready series through the gateway's cache (SeriesReplyCache). */
  async series(scope: ReportingScope & { granularity?: SeriesGranularity }, format: SeriesFormat, requestId: string, reply: FastifyReply): Promise<Buffer | string> {
    const payload: SeriesRequestDto = {
      agent_id: scope.agent_id,
      traffic: scope.traffic,
      time_range: scope.time_range,
      granularity: scope.granularity ?? defaultGranularity(scope.time_range),
    };
    const series = await this.seriesCache.fetch(payload, () => this.ask(RpcSubjects.seriesGet, payload, requestId), (body) => !body.includes(PREPARING));
    const preparing = this.privateJson(reply, series);
    if (format === 'json' || preparing) return series;
    const parsed = new RawJson(series).parse<ReportSeries>();
    void reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${seriesCsvFilename(parsed)}"`);
    return seriesCsv(parsed);
  }

  private async ask(subject: string, payload: object, requestId: string): Promise<Buffer> {
    const { bytes } = await firstValueFrom(this.reporting.send<RawJson>(subject, withRequestId(payload, requestId)));
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Sets the headers of a JSON answer (202 + Retry-After while preparing); true when it is the 202. */
  private privateJson(reply: FastifyReply, body: Buffer): boolean {
    // Reports are per platform and change every minute: no shared caches.
    void reply.header('Cache-Control', 'private, no-store').type('application/json; charset=utf-8');
    if (!body.includes(PREPARING)) return false;
    void reply.status(202).header('Retry-After', String(PREPARING_RETRY_AFTER_SECONDS));
    return true;
  }
}
