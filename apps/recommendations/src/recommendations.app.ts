import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createHttpApp, startRpcServer } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { RecommendationsModule } from './recommendations.module.js';

/** Builds the service (HTTP for health and metrics, NATS for requests); main.ts and the tests both start it through here. */
export async function createRecommendationsApp(env: RecommendationsEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(RecommendationsModule.forRoot(env, logger), { service: 'recommendations', logger });
  await startRpcServer(app, QueueGroups.recommendations);
  return app;
}
