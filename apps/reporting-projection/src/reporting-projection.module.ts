import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { serviceInfrastructure } from '#libs/bootstrap';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingDataSource, REPORTING_SCHEMA } from './database/reporting.data-source.js';
import { IngestionService } from './ingestion/ingestion.service.js';
import { ProjectionRepository } from './ingestion/projection.repository.js';
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
    const infrastructure = serviceInfrastructure({
      service: 'reporting-projection',
      natsUrl: env.NATS_URL,
      redisUrl: env.REDIS_URL,
      logger,
      database: { schema: REPORTING_SCHEMA, create: () => createReportingDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE) },
    });
    return {
      module: ReportingProjectionModule,
      global: true,
      imports: infrastructure.imports,
      providers: [
        { provide: ReportingProjectionEnv, useValue: env },
        ...infrastructure.providers,
        { provide: PROJECTION_PARTITIONS, useValue: env.INGEST_CONCURRENCY },
        ProjectionRepository,
        ProjectionService,
        IngestionService,
        RollupQueryRepository,
        SnapshotBuilder,
        SnapshotRepository,
        PublicationService,
        ReportHandler,
        TimezoneSettingsConsumer,
      ],
      exports: [ReportingProjectionEnv, ...infrastructure.exports],
    };
  }
}
