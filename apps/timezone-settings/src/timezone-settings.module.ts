import { Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { natsServers } from '#libs/config';
import { NatsClient } from '#libs/nats';
import { ObservabilityModule, type Logger } from '#libs/observability';
import {
  InfrastructureShutdown,
  REDIS,
  dataSourceProvider,
  dependencyChecks,
  loggerProvider,
  natsProvider,
  redisProvider,
} from '#libs/bootstrap';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { createTimezoneSettingsDataSource, TIMEZONE_SETTINGS_SCHEMA } from './database/timezone-settings.data-source.js';
import { TimezoneEventsRelay } from './settings/timezone-events.relay.js';
import { TimezoneSettingsRpc } from './settings/timezone-settings.rpc.js';
import { TimezoneSettingsService } from './settings/timezone-settings.service.js';

@Module({})
export class TimezoneSettingsModule {
  static forRoot(env: TimezoneSettingsEnv, logger: Logger): DynamicModule {
    return {
      module: TimezoneSettingsModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot([NatsClient, DataSource, REDIS], (nats: NatsClient, ds: DataSource, redis: Redis) =>
          dependencyChecks(nats, ds, redis),
        ),
      ],
      providers: [
        { provide: TimezoneSettingsEnv, useValue: env },
        loggerProvider(logger),
        natsProvider(natsServers(env.NATS_URL), 'timezone-settings'),
        dataSourceProvider(
          () => createTimezoneSettingsDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE),
          TIMEZONE_SETTINGS_SCHEMA,
        ),
        redisProvider(env.REDIS_URL, 'timezone-settings'),
        InfrastructureShutdown,
        TimezoneSettingsService,
        TimezoneEventsRelay,
        TimezoneSettingsRpc,
      ],
      exports: [TimezoneSettingsEnv, NatsClient, DataSource, REDIS],
    };
  }
}
