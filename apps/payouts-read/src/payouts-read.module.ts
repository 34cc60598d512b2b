import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { serviceInfrastructure } from '#libs/bootstrap';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { createPayoutsDataSource, PAYOUTS_SCHEMA } from './database/payouts.data-source.js';
import { PayoutsIngestionService } from './ingestion/payouts-ingestion.service.js';
import { PayoutsProjectionService } from './ingestion/payouts-projection.service.js';
import { PayoutReplyCache } from './queries/payout-reply-cache.js';
import { PayoutsHandler } from './queries/payouts.handler.js';
import { PayoutsRepository } from './queries/payouts.repository.js';

@Module({})
export class PayoutsReadModule {
  static forRoot(env: PayoutsReadEnv, logger: Logger): DynamicModule {
    const infrastructure = serviceInfrastructure({
      service: 'payouts-read',
      natsUrl: env.NATS_URL,
      redisUrl: env.REDIS_URL,
      logger,
      database: { schema: PAYOUTS_SCHEMA, create: () => createPayoutsDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE) },
    });
    return {
      module: PayoutsReadModule,
      global: true,
      imports: infrastructure.imports,
      providers: [
        { provide: PayoutsReadEnv, useValue: env },
        ...infrastructure.providers,
        PayoutReplyCache,
        PayoutsProjectionService,
        PayoutsIngestionService,
        PayoutsRepository,
        PayoutsHandler,
      ],
      exports: [PayoutsReadEnv, ...infrastructure.exports],
    };
  }
}
