import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { InfrastructureModule } from '#libs/bootstrap';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { createTimezoneSettingsDataSource, TIMEZONE_SETTINGS_SCHEMA } from './database/timezone-settings.data-source.js';
import { SettingsModule } from './settings/settings.module.js';

/** timezone-settings: owns the reporting timezone of every platform. */
@Module({})
export class TimezoneSettingsModule {
  static forRoot(env: TimezoneSettingsEnv, logger: Logger): DynamicModule {
    return {
      module: TimezoneSettingsModule,
      imports: [
        InfrastructureModule.forRoot({
          service: 'timezone-settings',
          env,
          logger,
          database: { schema: TIMEZONE_SETTINGS_SCHEMA, create: (e) => createTimezoneSettingsDataSource(e.DATABASE_URL, e.DATABASE_POOL_SIZE) },
        }),
        SettingsModule,
      ],
    };
  }
}
