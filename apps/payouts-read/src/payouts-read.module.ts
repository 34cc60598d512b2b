import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { InfrastructureModule } from '#libs/bootstrap';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { createPayoutsDataSource, PAYOUTS_SCHEMA } from './database/payouts.data-source.js';
import { IngestionModule } from './ingestion/ingestion.module.js';
import { QueriesModule } from './queries/queries.module.js';

/** payouts-read: the payout read model from `events.payouts.>`, and the `payouts.v1.*` queries. */
@Module({})
export class PayoutsReadModule {
  static forRoot(env: PayoutsReadEnv, logger: Logger): DynamicModule {
    return {
      module: PayoutsReadModule,
      imports: [
        InfrastructureModule.forRoot({
          service: 'payouts-read',
          env,
          logger,
          database: { schema: PAYOUTS_SCHEMA, create: (e) => createPayoutsDataSource(e.DATABASE_URL, e.DATABASE_POOL_SIZE) },
        }),
        IngestionModule,
        QueriesModule,
      ],
    };
  }
}
