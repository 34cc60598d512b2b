import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createServiceApp } from '#libs/bootstrap';
import { createRecommendationsDataSource } from '#libs/catalog';
import type { Logger } from '#libs/observability';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { RecommendationsModule } from './recommendations.module.js';
import { databaseUrl } from '#libs/config';

/** Builds the service; main.ts and the tests both start it through here. */
export function createRecommendationsApp(env: RecommendationsEnv, logger: Logger): Promise<NestFastifyApplication> {
  const database = { create: (e: RecommendationsEnv) => createRecommendationsDataSource(databaseUrl(e), e.DATABASE_POOL_SIZE) };
  return createServiceApp(RecommendationsModule, { service: 'recommendations', env, logger, database, queue: QueueGroups.recommendations });
}
