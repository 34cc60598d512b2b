import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from './config/gateway.env.js';
import { GatewayModule } from './gateway.module.js';
import { installHttpHooks } from './http/http-hooks.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';

/** Builds the gateway; main.ts and the tests both start it through here. */
export async function createGatewayApp(env: GatewayEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(GatewayModule.forRoot(env, logger), { service: 'gateway', logger, bodyLimit: env.HTTP_BODY_LIMIT });
  installHttpHooks(app);
  app.useGlobalFilters(new ProblemDetailsFilter(logger));
  return app;
}
