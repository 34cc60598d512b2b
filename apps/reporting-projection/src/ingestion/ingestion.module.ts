import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Durables, EventSubjects, Streams } from '#libs/contracts';
import { LOGGER, durableConsumerProvider } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { ProjectionRepository } from './projection.repository.js';
import { PROJECTION_PARTITIONS, ProjectionService } from './projection.service.js';
import { StoragePartitions } from './storage-partitions.js';

/** The durable pull consumer of EVENTS that feeds the projection. */
@Module({
  providers: [
    { provide: PROJECTION_PARTITIONS, inject: [ReportingProjectionEnv], useFactory: (env: ReportingProjectionEnv) => env.INGEST_CONCURRENCY },
    {
      provide: StoragePartitions,
      inject: [DataSource, ReportingProjectionEnv, LOGGER],
      useFactory: (dataSource: DataSource, env: ReportingProjectionEnv, logger: Logger) =>
        new StoragePartitions(dataSource, Date.now, env.REPORTING_RESTATEMENT_DAYS, env.REPORTING_MINUTE_ROLLUPS_DAYS, logger),
    },
    ProjectionRepository,
    ProjectionService,
    durableConsumerProvider('ingestion', {
      inject: [ProjectionService, ReportingProjectionEnv],
      useFactory: (projection: ProjectionService, env: ReportingProjectionEnv) => ({
        consumer: {
          stream: Streams.events,
          durable: Durables.reportingProjection,
          filterSubject: EventSubjects.all,
          ackWaitMs: 60_000,
          maxAckPending: Math.max(20_000, env.INGEST_BATCH_SIZE * 4),
        },
        batchSize: env.INGEST_BATCH_SIZE,
        maxDeliveries: env.INGEST_MAX_DELIVERIES,
        handler: (messages) => projection.applyBatch(messages),
      }),
    }),
  ],
})
export class IngestionModule {}
