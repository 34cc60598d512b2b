import { Controller, Get, Inject, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import { RpcSubjects, type ReportReply, type ReportRequestDto, type RpcReply } from '#libs/contracts';
import { NatsClient, RpcUnavailableError, requestRpc } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { Principal, type PlatformPrincipal } from '../auth/principal.js';
import { GatewayEnv } from '../config/gateway.env.js';
import { ProblemException } from '../http/problem.js';
import { parseReportingQuery } from './reporting-query.js';

/** Seconds a client waits while the first report of a scope is prepared (SPEC Limits). */
export const PREPARING_RETRY_AFTER_SECONDS = 60;
/** Seconds a client waits when reporting does not answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

const UNAVAILABLE = 'Reporting is temporarily unavailable; retry later.';

/**
 * GET /agent/reporting. Order of checks (DESIGN §5): the guard answers 401/403 first, then the
 * query is validated (422), then reporting-projection is asked over NATS request/reply.
 */
@Controller()
export class ReportingController {
  constructor(
    private readonly nats: NatsClient,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('agent/reporting')
  @UseGuards(ApiKeyGuard)
  async getReport(
    @Principal() principal: PlatformPrincipal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ReportReply> {
    const query = parseReportingQuery(request.raw.url ?? request.url);
    if (!query.ok) throw new ProblemException('invalid-query', query.detail);

    const payload: ReportRequestDto = { agent_id: principal.agent_id, traffic: principal.traffic, time_range: query.time_range };
    let answer: RpcReply<ReportReply>;
    try {
      answer = await requestRpc<ReportReply>(this.nats, RpcSubjects.reportGet, payload, {
        timeoutMs: this.env.REPORTING_REQUEST_TIMEOUT_MS,
        requestId: String(request.id),
      });
    } catch (error) {
      if (error instanceof RpcUnavailableError) {
        this.logger.warn({ requestId: request.id, err: error.message }, 'reporting did not answer');
        throw new ProblemException('reporting-unavailable', UNAVAILABLE, { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
      }
      throw error;
    }

    // Reports are per platform and change every minute: no shared caches.
    void reply.header('Cache-Control', 'private, no-store');
    if (answer.ok) {
      if (answer.result?.status === 'preparing') {
        void reply.status(202).header('Retry-After', String(PREPARING_RETRY_AFTER_SECONDS));
      }
      return answer.result;
    }
    switch (answer.error?.code) {
      case 'invalid_request':
        throw new ProblemException('invalid-query', answer.error.message || 'The report request is not valid.');
      case 'unavailable':
      case 'internal':
        this.logger.warn({ requestId: request.id, code: answer.error.code }, 'reporting answered with an error');
        throw new ProblemException('reporting-unavailable', UNAVAILABLE, { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
      default:
        // not_found or an unknown code: a contract mismatch between services, not the caller's fault.
        throw new Error(`unexpected reply from ${RpcSubjects.reportGet}: ${JSON.stringify(answer.error)}`);
    }
  }
}
