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
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingDataSource, REPORTING_SCHEMA } from './database/reporting.data-source.js';
import { IngestionService } from './ingestion/ingestion.service.js';
import { PROJECTION_PARTITIONS, ProjectionService } from './ingestion/projection.service.js';
import { PublicationService } from './publication/publication.service.js';
import { RollupQueryRepository } from './publication/rollup-query.repository.js';
import { SnapshotBuilder } from './publication/snapshot-builder.service.js';
import { SnapshotRepository } from './publication/snapshot.repository.js';
import { ReportHandler } from './reports/report.handler.js';
import { TimezoneSettingsConsumer } from './settings/timezone-settings.consumer.js';

@Module({})
export class ReportingProjectionModule {
  static forRoot(env: ReportingProjectionEnv, logger: Logger): DynamicModule {
    return {
      module: ReportingProjectionModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot([NatsClient, DataSource, REDIS], (nats: NatsClient, ds: DataSource, redis: Redis) =>
          dependencyChecks(nats, ds, redis),
        ),
      ],
      providers: [
        { provide: ReportingProjectionEnv, useValue: env },
        loggerProvider(logger),
        natsProvider(natsServers(env.NATS_URL), 'reporting-projection'),
        dataSourceProvider(() => createReportingDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE), REPORTING_SCHEMA),
        redisProvider(env.REDIS_URL, 'reporting-projection'),
        InfrastructureShutdown,
        { provide: PROJECTION_PARTITIONS, useValue: env.INGEST_CONCURRENCY },
        ProjectionService,
        IngestionService,
        RollupQueryRepository,
        SnapshotBuilder,
        SnapshotRepository,
        PublicationService,
        ReportHandler,
        TimezoneSettingsConsumer,
      ],
      exports: [ReportingProjectionEnv, NatsClient, DataSource, REDIS],
    };
  }
}
