import { Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { natsServers } from '#libs/config';
import { NatsClient } from '#libs/nats';
import { ObservabilityModule, type Logger } from '#libs/observability';
import {
  InfrastructureShutdown,
  REDIS,
  dataSourceProvider,
  dependencyChecks,
  loggerProvider,
  natsProvider,
  redisProvider,
} from '#libs/bootstrap';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { createPayoutsDataSource, PAYOUTS_SCHEMA } from './database/payouts.data-source.js';
import { PayoutsIngestionService } from './ingestion/payouts-ingestion.service.js';
import { PayoutsProjectionService } from './ingestion/payouts-projection.service.js';
import { PayoutsHandler } from './queries/payouts.handler.js';
import { PayoutsRepository } from './queries/payouts.repository.js';

@Module({})
export class PayoutsReadModule {
  static forRoot(env: PayoutsReadEnv, logger: Logger): DynamicModule {
    return {
      module: PayoutsReadModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot([NatsClient, DataSource, REDIS], (nats: NatsClient, ds: DataSource, redis: Redis) =>
          dependencyChecks(nats, ds, redis),
        ),
      ],
      providers: [
        { provide: PayoutsReadEnv, useValue: env },
        loggerProvider(logger),
        natsProvider(natsServers(env.NATS_URL), 'payouts-read'),
        dataSourceProvider(() => createPayoutsDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE), PAYOUTS_SCHEMA),
        redisProvider(env.REDIS_URL, 'payouts-read'),
        InfrastructureShutdown,
        PayoutsProjectionService,
        PayoutsIngestionService,
        PayoutsRepository,
        PayoutsHandler,
      ],
      exports: [PayoutsReadEnv, NatsClient, DataSource, REDIS],
    };
  }
}
