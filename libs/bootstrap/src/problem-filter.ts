import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '#libs/observability';
import { sendProblem, type ProblemFactory } from './framework-problems.js';

/** The message of a 4xx HttpException (Nest's and Fastify's are written for callers). */
export function httpExceptionDetail(exception: HttpException): string {
  const response = exception.getResponse();
  const message = typeof response === 'string' ? response : ((response as { message?: unknown })?.message ?? exception.message);
  if (Array.isArray(message)) return message.map(String).join('; ');
  return typeof message === 'string' && message.length > 0 ? message : exception.message;
}

/**
 * The default exception filter of every service (createHttpApp installs it; the gateway
 * registers its own, richer one after it, which takes precedence): 4xx errors — unknown routes,
 * body limit (413), media type (415), malformed JSON (400) — answer RFC 9457 problems, and an
 * unexpected error a generic 500 problem, logged with the request id, never a stack trace.
 * A deliberate 5xx HttpException keeps its own body: the readiness check's 503 lists the
 * dependencies that are down, which is what an operator wants to read.
 */
@Catch()
export class HttpProblemFilter implements ExceptionFilter {
  constructor(
    private readonly problem: ProblemFactory,
    private readonly logger: Logger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (reply.sent) return;
    const headers = { 'X-Request-Id': String(request.id) };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        // Nest's 404 message echoes the request path: a fixed text instead.
        const detail = status === 404 ? 'No resource exists at this path for this method.' : httpExceptionDetail(exception);
        sendProblem(reply, this.problem(status, detail), headers);
        return;
      }
      const body = exception.getResponse();
      void reply.code(status).headers(headers).send(typeof body === 'string' ? { statusCode: status, message: body } : body);
      return;
    }
    this.logger.error({ err: exception, requestId: request.id, method: request.method, route: request.routeOptions?.url }, 'request failed with an unexpected error');
    sendProblem(reply, this.problem(500, 'An unexpected error occurred. Quote the X-Request-Id header when contacting support.'), headers);
  }
}
