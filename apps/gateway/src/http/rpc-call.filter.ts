import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { RpcCallError } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { downstreamOf, type DownstreamService } from './downstream-services.js';
import type { ProblemDetailsFilter } from './problem-details.filter.js';
import { ProblemException } from './problem.js';

/**
 * Answers a failed request/reply to a service behind the gateway (an RpcCallError from its
 * ClientProxy) with that service's problem (DOWNSTREAM):
 * - no answer in time, or nobody listens (NATS "no responders", at once): its 503 with
 *   Retry-After, logged once as "<service> did not answer";
 * - `unavailable` / `internal`: the same 503, logged as "<service> answered with an error";
 * - `invalid_request`: 422 with the service's message;
 * - `not_found`: its 404, for a service whose routes have one;
 * - any other code: a contract mismatch between services, not the caller's fault (500).
 * The problem is sent by ProblemDetailsFilter, as every other error of the gateway.
 */
@Catch(RpcCallError)
export class RpcCallFilter implements ExceptionFilter {
  constructor(
    private readonly problems: ProblemDetailsFilter,
    private readonly logger: Logger,
  ) {}

  catch(error: RpcCallError, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    this.problems.catch(this.toException(error, request.id), host);
  }

  private toException(error: RpcCallError, requestId: unknown): Error {
    const service = downstreamOf(error.subject);
    if (!service) return error;
    const log = { requestId, subject: error.subject };
    if (!error.answered) {
      this.logger.warn({ ...log, err: error.message }, `${service.name} did not answer`);
      return unavailable(service);
    }
    switch (error.code) {
      case 'unavailable':
      case 'internal':
        this.logger.warn({ ...log, code: error.code }, `${service.name} answered with an error`);
        return unavailable(service);
      case 'invalid_request':
        return new ProblemException(service.invalid.slug, error.message || service.invalid.fallback);
      case 'not_found':
        if (service.notFound) return new ProblemException(service.notFound.slug, service.notFound.detail);
    }
    return new Error(`unexpected reply from ${error.subject}: ${error.code}`);
  }
}

function unavailable({ unavailable: u }: DownstreamService): ProblemException {
  return new ProblemException(u.slug, u.detail, { 'Retry-After': String(u.retryAfterSeconds) });
}
