import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Durables, PAYOUT_EVENTS_FILTER, Streams } from '#libs/contracts';
import { LOGGER } from '#libs/bootstrap';
import { isTransientDatabaseError } from '#libs/database';
import { JetStreamBatchConsumer, NatsClient, ensureDurableConsumer } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { PayoutsReadEnv } from '../config/payouts-read.env.js';
import { PayoutsProjectionService } from './payouts-projection.service.js';

/** Runs the durable pull consumer of `events.payouts.>` that feeds the payout read model. */
@Injectable()
export class PayoutsIngestionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: JetStreamBatchConsumer;

  constructor(
    private readonly nats: NatsClient,
    private readonly projection: PayoutsProjectionService,
    private readonly env: PayoutsReadEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await ensureDurableConsumer(this.nats.manager, {
      stream: Streams.events,
      durable: Durables.payoutsRead,
      filterSubject: PAYOUT_EVENTS_FILTER,
      ackWaitMs: 60_000,
      maxAckPending: Math.max(5_000, this.env.PAYOUTS_INGEST_BATCH_SIZE * 4),
    });
    this.consumer = new JetStreamBatchConsumer(
      this.nats,
      {
        stream: Streams.events,
        durable: Durables.payoutsRead,
        batchSize: this.env.PAYOUTS_INGEST_BATCH_SIZE,
        fetchExpiresMs: 1000,
        maxDeliveries: this.env.PAYOUTS_INGEST_MAX_DELIVERIES,
        backoffBaseMs: 500,
        backoffMaxMs: 30_000,
        isTransient: isTransientDatabaseError,
      },
      (messages) => this.projection.applyBatch(messages),
      this.logger.child({ component: 'payouts-ingestion' }),
    );
    this.consumer.start();
  }

  /** Stop taking events and let the batch in flight commit and be acked before NATS drains. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }
}
