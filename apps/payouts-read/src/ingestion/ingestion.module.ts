import { Module } from '@nestjs/common';
import { Durables, PAYOUT_EVENTS_FILTER, Streams } from '#libs/contracts';
import { durableConsumerProvider } from '#libs/bootstrap';
import { PayoutsReadEnv } from '../config/payouts-read.env.js';
import { QueriesModule } from '../queries/queries.module.js';
import { PayoutsProjectionService } from './payouts-projection.service.js';

/**
 * The durable pull consumer of `events.payouts.>` that feeds the payout read model; each commit
 * announces the platforms it changed to the reply caches.
 */
@Module({
  imports: [QueriesModule],
  providers: [
    PayoutsProjectionService,
    durableConsumerProvider('payouts-ingestion', {
      inject: [PayoutsProjectionService, PayoutsReadEnv],
      useFactory: (projection: PayoutsProjectionService, env: PayoutsReadEnv) => ({
        consumer: {
          stream: Streams.events,
          durable: Durables.payoutsRead,
          filterSubject: PAYOUT_EVENTS_FILTER,
          ackWaitMs: 60_000,
          maxAckPending: Math.max(5_000, env.PAYOUTS_INGEST_BATCH_SIZE * 4),
        },
        batchSize: env.PAYOUTS_INGEST_BATCH_SIZE,
        maxDeliveries: env.PAYOUTS_INGEST_MAX_DELIVERIES,
        handler: (messages) => projection.applyBatch(messages),
      }),
    }),
  ],
})
export class IngestionModule {}
