import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { PayoutsReadModule } from './payouts-read.module.js';

/** Builds the service; main.ts and the tests both start it through here. */
export async function createPayoutsReadApp(env: PayoutsReadEnv, logger: Logger): Promise<NestFastifyApplication> {
  return createHttpApp(PayoutsReadModule.forRoot(env, logger), { service: 'payouts-read', logger });
}
