import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createServiceApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { createPayoutsDataSource } from './database/payouts.data-source.js';
import { PayoutsReadModule } from './payouts-read.module.js';
import { databaseUrl } from '#libs/config';

/** Builds the service; main.ts and the tests both start it through here. */
export function createPayoutsReadApp(env: PayoutsReadEnv, logger: Logger): Promise<NestFastifyApplication> {
  const database = { create: (e: PayoutsReadEnv) => createPayoutsDataSource(databaseUrl(e), e.DATABASE_POOL_SIZE) };
  return createServiceApp(PayoutsReadModule, { service: 'payouts-read', env, logger, database, queue: QueueGroups.payouts });
}
