import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { TimezoneSettingsModule } from './timezone-settings.module.js';

/** Builds the service; main.ts and the tests both start it through here. */
export async function createTimezoneSettingsApp(env: TimezoneSettingsEnv, logger: Logger): Promise<NestFastifyApplication> {
  return createHttpApp(TimezoneSettingsModule.forRoot(env, logger), { service: 'timezone-settings', logger });
}
