import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { InfrastructureModule } from '#libs/bootstrap';
import { createRecommendationsDataSource, RECOMMENDATIONS_SCHEMA } from '#libs/catalog';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { RecommendModule } from './recommend/recommend.module.js';

/** recommendations: ranks the catalog for a question and records the answer. */
@Module({})
export class RecommendationsModule {
  static forRoot(env: RecommendationsEnv, logger: Logger): DynamicModule {
    return {
      module: RecommendationsModule,
      imports: [
        InfrastructureModule.forRoot({
          service: 'recommendations',
          env,
          logger,
          database: { schema: RECOMMENDATIONS_SCHEMA, create: (e) => createRecommendationsDataSource(e.DATABASE_URL, e.DATABASE_POOL_SIZE) },
        }),
        RecommendModule,
      ],
    };
  }
}
