import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createServiceApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { createTimezoneSettingsDataSource } from './database/timezone-settings.data-source.js';
import { TimezoneSettingsModule } from './timezone-settings.module.js';
import { databaseUrl } from '#libs/config';

/** Builds the service; main.ts and the tests both start it through here. */
export function createTimezoneSettingsApp(env: TimezoneSettingsEnv, logger: Logger): Promise<NestFastifyApplication> {
  const database = { create: (e: TimezoneSettingsEnv) => createTimezoneSettingsDataSource(databaseUrl(e), e.DATABASE_POOL_SIZE) };
  return createServiceApp(TimezoneSettingsModule, { service: 'timezone-settings', env, logger, database, queue: QueueGroups.timezoneSettings });
}
