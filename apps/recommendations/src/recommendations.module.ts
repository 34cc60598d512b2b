import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { serviceInfrastructure } from '#libs/bootstrap';
import { createRecommendationsDataSource, RECOMMENDATIONS_SCHEMA } from '#libs/catalog';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { AdSearchRepository } from './ranking/ad-search.repository.js';
import { GeneratedEventsRelay } from './recommend/generated-events.relay.js';
import { RecommendRpc } from './recommend/recommend.rpc.js';
import { RecommendService } from './recommend/recommend.service.js';
import { RecommendationRepository } from './recommend/recommendation.repository.js';

@Module({})
export class RecommendationsModule {
  static forRoot(env: RecommendationsEnv, logger: Logger): DynamicModule {
    const infrastructure = serviceInfrastructure({
      service: 'recommendations',
      natsUrl: env.NATS_URL,
      redisUrl: env.REDIS_URL,
      logger,
      database: { schema: RECOMMENDATIONS_SCHEMA, create: () => createRecommendationsDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE) },
    });
    return {
      module: RecommendationsModule,
      global: true,
      imports: infrastructure.imports,
      providers: [
        { provide: RecommendationsEnv, useValue: env },
        ...infrastructure.providers,
        AdSearchRepository,
        RecommendationRepository,
        GeneratedEventsRelay,
        RecommendService,
        RecommendRpc,
      ],
      exports: [RecommendationsEnv, ...infrastructure.exports],
    };
  }
}
