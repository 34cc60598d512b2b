import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { ReportingProjectionModule } from './reporting-projection.module.js';

/** Builds the service; main.ts and the tests both start it through here. */
export async function createReportingProjectionApp(env: ReportingProjectionEnv, logger: Logger): Promise<NestFastifyApplication> {
  return createHttpApp(ReportingProjectionModule.forRoot(env, logger), { service: 'reporting-projection', logger });
}
