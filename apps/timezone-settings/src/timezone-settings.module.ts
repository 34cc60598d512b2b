import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { serviceInfrastructure } from '#libs/bootstrap';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { createTimezoneSettingsDataSource, TIMEZONE_SETTINGS_SCHEMA } from './database/timezone-settings.data-source.js';
import { TimezoneEventsRelay } from './settings/timezone-events.relay.js';
import { TimezoneSettingsRpc } from './settings/timezone-settings.rpc.js';
import { TimezoneSettingsService } from './settings/timezone-settings.service.js';

@Module({})
export class TimezoneSettingsModule {
  static forRoot(env: TimezoneSettingsEnv, logger: Logger): DynamicModule {
    const infrastructure = serviceInfrastructure({
      service: 'timezone-settings',
      natsUrl: env.NATS_URL,
      redisUrl: env.REDIS_URL,
      logger,
      database: { schema: TIMEZONE_SETTINGS_SCHEMA, create: () => createTimezoneSettingsDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE) },
    });
    return {
      module: TimezoneSettingsModule,
      global: true,
      imports: infrastructure.imports,
      providers: [
        { provide: TimezoneSettingsEnv, useValue: env },
        ...infrastructure.providers,
        TimezoneSettingsService,
        TimezoneEventsRelay,
        TimezoneSettingsRpc,
      ],
      exports: [TimezoneSettingsEnv, ...infrastructure.exports],
    };
  }
}
