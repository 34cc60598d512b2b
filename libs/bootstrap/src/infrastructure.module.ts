import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { natsServers, type ServerEnv } from '#libs/config';
import { NatsClient } from '#libs/nats';
import { ObservabilityModule, type Logger } from '#libs/observability';
import {
  InfrastructureShutdown,
  LOGGER,
  REDIS,
  dataSourceProvider,
  dependencyChecks,
  loggerProvider,
  natsProvider,
  natsSettings,
  redisProvider,
} from './infrastructure.js';

export interface InfrastructureOptions<Env extends ServerEnv> {
  /** The service's name: its NATS connection name, its PostgreSQL application_name. */
  service: string;
  /** The service's validated env object; provided under its class, so `constructor(env: GatewayEnv)` works. */
  env: Env;
  logger: Logger;
  /** The DataSource of the service's own schema, migrated at start. */
  database: { create: (env: Env) => DataSource };
}

/**
 * What every app wires the same way, once: its env object, the logger, NATS (one connection,
 * with the JetStream streams), its PostgreSQL DataSource (migrated at start), Redis, health
 * (`/health/live`, `/health/ready`) and metrics (`/metrics`), and the ordered shutdown (drain
 * NATS, then close the pool and Redis, after every component stopped taking work).
 *
 * The one global module of an app: feature modules inject NatsClient, DataSource, REDIS,
 * LOGGER and the env class without importing anything.
 */
@Module({})
export class InfrastructureModule {
  static forRoot<Env extends ServerEnv>(options: InfrastructureOptions<Env>): DynamicModule {
    const envProvider: Provider = { provide: options.env.constructor, useValue: options.env };
    return {
      module: InfrastructureModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot([NatsClient, DataSource, REDIS], (nats: NatsClient, dataSource: DataSource, redis: Redis) =>
          dependencyChecks(nats, dataSource, redis),
        ),
      ],
      providers: [
        envProvider,
        loggerProvider(options.logger),
        natsProvider(natsServers(options.env.NATS_URL), options.service, natsSettings(options.env)),
        dataSourceProvider(() => options.database.create(options.env)),
        redisProvider(options.env.REDIS_URL, options.service, options.env.REDIS_TLS_CA_FILE),
        InfrastructureShutdown,
      ],
      exports: [options.env.constructor as never, LOGGER, NatsClient, DataSource, REDIS],
    };
  }
}
