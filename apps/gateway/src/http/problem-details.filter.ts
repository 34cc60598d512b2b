import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '#libs/observability';
import { ProblemException, problemForStatus, type ProblemDetails } from './problem.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const STATIC_DETAILS: Record<number, string> = {
  404: 'No resource exists at this path for this method.',
  500: 'An unexpected error occurred. Quote the X-Request-Id header when contacting support.',
};

/**
 * Answers every error of the gateway with RFC 9457 problem details: the gateway's own
 * ProblemExceptions, Nest's HttpExceptions (including the 404 of unknown routes), Fastify's
 * 4xx errors (413 body limit, 415 media type, 400 bad JSON, which Nest maps to HttpException)
 * and anything unexpected (500, generic detail, logged with the request id). Never a stack.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const { problem, headers } = this.toProblem(exception, request);

    if (reply.sent) return;
    if (problem.status === 401) headers['WWW-Authenticate'] ??= 'Bearer';
    void reply
      .status(problem.status)
      .headers({ ...headers, 'X-Request-Id': String(request.id), 'Cache-Control': 'no-store' })
      .header('Content-Type', PROBLEM_CONTENT_TYPE)
      // A Buffer keeps Fastify from appending a charset: RFC 9457 registers the bare media type.
      .send(Buffer.from(JSON.stringify(problem), 'utf8'));
  }

  private toProblem(exception: unknown, request: FastifyRequest): { problem: ProblemDetails; headers: Record<string, string> } {
    if (exception instanceof ProblemException) {
      return { problem: exception.problem, headers: { ...exception.headers } };
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const status = exception.getStatus();
      return { problem: problemForStatus(status, STATIC_DETAILS[status] ?? this.detailOf(exception, status)), headers: {} };
    }
    if (exception instanceof HttpException) {
      // A deliberate 5xx (e.g. the 503 of /health/ready while a dependency is down) keeps its status.
      const status = exception.getStatus();
      this.logger.warn({ requestId: request.id, status, route: request.routeOptions?.url, err: exception.message }, 'request answered with a server error');
      return { problem: problemForStatus(status, STATIC_DETAILS[status] ?? 'The service cannot answer right now; retry later.'), headers: {} };
    }
    this.logger.error(
      { err: exception, requestId: request.id, method: request.method, route: request.routeOptions?.url },
      'request failed with an unexpected error',
    );
    return { problem: problemForStatus(500, STATIC_DETAILS[500]), headers: {} };
  }

  /** The message of a 4xx HttpException (Fastify's and Nest's are safe to show). */
  private detailOf(exception: HttpException, status: number): string {
    const response = exception.getResponse();
    const message =
      typeof response === 'string' ? response : (response as { message?: unknown })?.message ?? exception.message;
    if (Array.isArray(message)) return message.map(String).join('; ');
    return typeof message === 'string' && message.length > 0 ? message : problemForStatus(status, '').title;
  }
}
