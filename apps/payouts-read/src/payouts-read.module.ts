import { Module } from '@nestjs/common';
import { IngestionModule } from './ingestion/ingestion.module.js';
import { QueriesModule } from './queries/queries.module.js';

/**
 * payouts-read: the payout read model from `events.payouts.>`, and the `payouts.v1.*` queries.
 * createPayoutsReadApp adds the InfrastructureModule.
 */
@Module({ imports: [IngestionModule, QueriesModule] })
export class PayoutsReadModule {}
