import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import { cidrList } from '#libs/config';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from './config/gateway.env.js';
import { buildOpenApiDocument } from './docs/api-docs.js';
import { OpenApiDocument } from './docs/openapi-document.js';
import { GatewayModule } from './gateway.module.js';
import { installApiSecurityHeaders } from './http/api-security-headers.js';
import { HttpValidationPipe } from './http/http-validation.pipe.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';
import { problemForStatus } from './http/problem.js';
import { RpcCallFilter } from './http/rpc-call.filter.js';

/** Builds the gateway; main.ts and the tests both start it through here. */
export async function createGatewayApp(env: GatewayEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(GatewayModule.forRoot(env, logger), {
    service: 'gateway',
    logger,
    bodyLimit: env.HTTP_BODY_LIMIT,
    // X-Forwarded-For only from the proxies named in TRUSTED_PROXIES (none by default).
    trustProxy: cidrList(env.TRUSTED_PROXIES),
    // Fastify's own answers (malformed URL or HTTP message, shutting down) use the gateway's problem types.
    problem: problemForStatus,
  });
  installApiSecurityHeaders(app.getHttpAdapter().getInstance());
  app.useGlobalPipes(new HttpValidationPipe());
  // The filter registered last is asked first: failed request/replies, then every other error.
  const problems = new ProblemDetailsFilter(logger);
  app.useGlobalFilters(problems, new RpcCallFilter(problems, logger));
  app.get(OpenApiDocument).publish(buildOpenApiDocument(app));
  return app;
}
