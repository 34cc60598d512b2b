import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * The id of the HTTP request (Fastify's `request.id`, the X-Request-Id of the answer), as a
 * handler input: the services send it with their NATS requests (withRequestId), so a service's
 * log lines can be found from the id a client quotes. Passed explicitly rather than through an
 * AsyncLocalStorage context (docs/decisions/gateway-request-id-without-async-context.md).
 */
export const RequestId = createParamDecorator((_: unknown, context: ExecutionContext): string => String(context.switchToHttp().getRequest<FastifyRequest>().id));
