import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from './config/gateway.env.js';
import { buildOpenApiDocument, installApiDocs } from './docs/api-docs.js';
import { GatewayModule } from './gateway.module.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';
import { problemForStatus } from './http/problem.js';

/** Builds the gateway; main.ts and the tests both start it through here. */
export async function createGatewayApp(env: GatewayEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(GatewayModule.forRoot(env, logger), {
    service: 'gateway',
    logger,
    bodyLimit: env.HTTP_BODY_LIMIT,
    // Fastify's own answers (malformed URL or HTTP message, shutting down) use the gateway's problem types.
    problem: problemForStatus,
  });
  app.useGlobalFilters(new ProblemDetailsFilter(logger));
  installApiDocs(app, buildOpenApiDocument(app), logger);
  return app;
}
