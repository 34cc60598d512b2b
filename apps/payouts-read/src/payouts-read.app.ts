import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createHttpApp, startRpcServer } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { PayoutsReadModule } from './payouts-read.module.js';

/** Builds the service (HTTP for health and metrics, NATS for requests); main.ts and the tests both start it through here. */
export async function createPayoutsReadApp(env: PayoutsReadEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(PayoutsReadModule.forRoot(env, logger), { service: 'payouts-read', logger });
  await startRpcServer(app, QueueGroups.payouts);
  return app;
}
