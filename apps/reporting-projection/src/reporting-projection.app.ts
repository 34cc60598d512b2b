import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createHttpApp, startRpcServer } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { ReportingProjectionModule } from './reporting-projection.module.js';

/** Builds the service (HTTP for health and metrics, NATS for requests); main.ts and the tests both start it through here. */
export async function createReportingProjectionApp(env: ReportingProjectionEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(ReportingProjectionModule.forRoot(env, logger), { service: 'reporting-projection', logger });
  await startRpcServer(app, QueueGroups.reporting);
  return app;
}
