import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** The request id of the HTTP request (X-Request-Id), which also travels in the NATS header of a request/reply. */
export const RequestId = createParamDecorator((_data: unknown, context: ExecutionContext): string => String(context.switchToHttp().getRequest<FastifyRequest>().id));
