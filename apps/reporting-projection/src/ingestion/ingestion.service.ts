import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Durables, EventSubjects, Streams } from '#libs/contracts';
import { LOGGER } from '#libs/bootstrap';
import { isTransientDatabaseError } from '#libs/database';
import { JetStreamBatchConsumer, NatsClient, ensureDurableConsumer } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { ProjectionService } from './projection.service.js';

/** Runs the durable pull consumer of EVENTS that feeds the projection. */
@Injectable()
export class IngestionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: JetStreamBatchConsumer;

  constructor(
    private readonly nats: NatsClient,
    private readonly projection: ProjectionService,
    private readonly env: ReportingProjectionEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await ensureDurableConsumer(this.nats.manager, {
      stream: Streams.events,
      durable: Durables.reportingProjection,
      filterSubject: EventSubjects.all,
      ackWaitMs: 60_000,
      maxAckPending: Math.max(20_000, this.env.INGEST_BATCH_SIZE * 4),
    });
    this.consumer = new JetStreamBatchConsumer(
      this.nats,
      {
        stream: Streams.events,
        durable: Durables.reportingProjection,
        batchSize: this.env.INGEST_BATCH_SIZE,
        fetchExpiresMs: 1000,
        maxDeliveries: this.env.INGEST_MAX_DELIVERIES,
        backoffBaseMs: 500,
        backoffMaxMs: 30_000,
        isTransient: isTransientDatabaseError,
      },
      (messages) => this.projection.applyBatch(messages),
      this.logger.child({ component: 'ingestion' }),
    );
    this.consumer.start();
  }

  /** Stop taking events and let the batch in flight commit and be acked before NATS drains. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }
}
