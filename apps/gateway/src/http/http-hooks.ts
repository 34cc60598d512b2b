import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { histogram } from '#libs/observability';

const httpSeconds = histogram(
  'weave_http_request_duration_seconds',
  'HTTP requests answered by the gateway',
  ['method', 'route', 'status'],
  [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

// A caller's request id is echoed and logged: accept only a short, plain token, else make one.
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Route pattern for metric labels: never the raw URL (unbounded cardinality). */
export function routeLabel(request: FastifyRequest): string {
  return request.routeOptions?.url ?? 'unmatched';
}

/**
 * Fastify hooks of the gateway, installed before the routes are registered (before init):
 * - X-Request-Id: the caller's (when it is a plain token) or a generated one, echoed on every
 *   response including errors and 404s;
 * - the HTTP duration histogram, labelled by route pattern and status.
 */
export function installHttpHooks(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.addHook('onRequest', async (request, reply) => {
    if (!REQUEST_ID_PATTERN.test(String(request.id))) (request as { id: string }).id = randomUUID();
    void reply.header('X-Request-Id', request.id);
  });
  fastify.addHook('onResponse', async (request, reply) => {
    httpSeconds.observe(
      { method: request.method, route: routeLabel(request), status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
