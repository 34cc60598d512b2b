import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { RecommendationsModule } from './recommendations.module.js';

/** Builds the service; main.ts and the tests both start it through here. */
export async function createRecommendationsApp(env: RecommendationsEnv, logger: Logger): Promise<NestFastifyApplication> {
  return createHttpApp(RecommendationsModule.forRoot(env, logger), { service: 'recommendations', logger });
}
