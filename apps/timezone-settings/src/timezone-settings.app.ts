import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { QueueGroups } from '#libs/contracts';
import { createHttpApp, startRpcServer } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { TimezoneSettingsModule } from './timezone-settings.module.js';

/** Builds the service (HTTP for health and metrics, NATS for requests); main.ts and the tests both start it through here. */
export async function createTimezoneSettingsApp(env: TimezoneSettingsEnv, logger: Logger): Promise<NestFastifyApplication> {
  const app = await createHttpApp(TimezoneSettingsModule.forRoot(env, logger), { service: 'timezone-settings', logger });
  await startRpcServer(app, QueueGroups.timezoneSettings);
  return app;
}
