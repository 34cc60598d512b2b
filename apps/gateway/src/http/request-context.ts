import type { ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ClsModule } from 'nestjs-cls';

/**
 * The request context of the gateway (nestjs-cls over AsyncLocalStorage): the id of the HTTP
 * request in hand (Fastify's `request.id`, the X-Request-Id of the answer), readable as
 * `ClsService.getId()` from anything the handler calls. The NATS clients of downstreamClient()
 * send it with every request by themselves, so handlers and services never pass it down.
 *
 * Set up by nestjs-cls's interceptor (AsyncLocalStorage#run around the handler, after the
 * guards and the body parser, so a POST keeps its context); guards and exception filters read
 * `request.id` from the request they are given. No plugins and no proxy providers: nothing
 * else to resolve per request.
 */
export const RequestContextModule = ClsModule.forRoot({
  global: true,
  interceptor: {
    mount: true,
    generateId: true,
    idGenerator: (context: ExecutionContext) => String(context.switchToHttp().getRequest<FastifyRequest>().id),
    initializePlugins: false,
    resolveProxyProviders: false,
  },
});
