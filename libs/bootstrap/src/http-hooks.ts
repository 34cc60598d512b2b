import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { histogram } from '#libs/observability';

const httpSeconds = histogram(
  'weave_http_request_duration_seconds',
  'HTTP requests answered (the gateway API; health and metrics of every service)',
  ['method', 'route', 'status'],
  [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

/** Route pattern for metric labels: never the raw URL (unbounded cardinality). */
export function routeLabel(request: FastifyRequest): string {
  return request.routeOptions?.url ?? 'unmatched';
}

/**
 * Fastify hooks of every service, installed before the routes are registered (before init):
 * - X-Request-Id (the caller's when it is a plain token, else a new one: see genReqId) echoed
 *   on every response including errors and 404s;
 * - the HTTP duration histogram, labelled by route pattern and status.
 */
export function installHttpHooks(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  // Callback hooks, not async ones: no promise and microtask per request for synchronous work.
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', request.id);
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    httpSeconds.observe(
      { method: request.method, route: routeLabel(request), status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
