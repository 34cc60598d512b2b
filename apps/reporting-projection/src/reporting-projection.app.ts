import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createServiceApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingDataSource } from './database/reporting.data-source.js';
import { ReportingProjectionModule } from './reporting-projection.module.js';
import { databaseUrl } from '#libs/config';

/** Builds the service; main.ts and the tests both start it through here. */
export function createReportingProjectionApp(env: ReportingProjectionEnv, logger: Logger): Promise<NestFastifyApplication> {
  const database = { create: (e: ReportingProjectionEnv) => createReportingDataSource(databaseUrl(e), e.DATABASE_POOL_SIZE) };
  return createServiceApp(ReportingProjectionModule, { service: 'reporting-projection', env, logger, database, queue: QueueGroups.reporting });
}
