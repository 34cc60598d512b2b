import { Inject, Injectable, Optional, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { NatsClient, ensureStreams, type StreamRetention } from '#libs/nats';
import { initializeDatabase } from '#libs/database';
import type { DependencyCheck, Logger } from '#libs/observability';
import { natsIdentity, streamRetention, type NatsIdentity, type ServerEnv } from '#libs/config';
import { createRedis } from './redis.js';

export const LOGGER = Symbol('LOGGER');
export const REDIS = Symbol('REDIS');

export function loggerProvider(logger: Logger): Provider {
  return { provide: LOGGER, useValue: logger };
}

/** The NATS identity (DESIGN §8) and stream retention a service's env asks for. */
export interface NatsSettings {
  identity?: NatsIdentity;
  retention?: StreamRetention;
}

export function natsSettings(env: ServerEnv): NatsSettings {
  return { identity: natsIdentity(env), retention: streamRetention(env) };
}

/** Connects to NATS (as the env's user) and creates the JetStream streams of DESIGN §4 (idempotent). */
export function natsProvider(servers: string[], name: string, settings: NatsSettings = {}): Provider {
  return {
    provide: NatsClient,
    inject: [LOGGER],
    useFactory: async (logger: Logger) => {
      const nats = await NatsClient.connect({ servers, name, logger, identity: settings.identity });
      await ensureStreams(nats.manager, { retention: settings.retention, logger });
      return nats;
    },
  };
}

/**
 * The service's DataSource, connected and migrated (under its schema's advisory lock, see
 * ServiceDataSource) before any provider that injects it is built.
 */
export function dataSourceProvider(create: () => DataSource): Provider {
  return {
    provide: DataSource,
    useFactory: async () => {
      const dataSource = create();
      await initializeDatabase(dataSource);
      return dataSource;
    },
  };
}

export function redisProvider(url: string, name: string): Provider {
  return {
    provide: REDIS,
    inject: [LOGGER],
    useFactory: (logger: Logger) => {
      const redis = createRedis(url, name);
      let lastWarning = 0;
      redis.on('error', (error) => {
        // Redis is a cache here: warn, at most every 10 s, and keep serving.
        if (Date.now() - lastWarning > 10000) {
          lastWarning = Date.now();
          logger.warn({ err: error.message }, 'Redis unavailable');
        }
      });
      return redis;
    },
  };
}

/** The readiness checks of DESIGN §5 for whichever of the three servers a service uses. */
export function dependencyChecks(nats?: NatsClient, dataSource?: DataSource, redis?: Redis): DependencyCheck[] {
  const checks: DependencyCheck[] = [];
  if (nats) checks.push({ name: 'nats', probe: () => nats.ping() });
  // Raw SQL: the cheapest round trip, for readiness.
  if (dataSource) checks.push({ name: 'postgres', probe: () => dataSource.query('SELECT 1') });
  if (redis) checks.push({ name: 'redis', probe: () => redis.ping() });
  return checks;
}

/**
 * Closes the connections last, after every component stopped taking work in its own
 * beforeApplicationShutdown hook: drain NATS, then close the pool and Redis.
 */
@Injectable()
export class InfrastructureShutdown implements OnApplicationShutdown {
  constructor(
    @Optional() private readonly nats?: NatsClient,
    @Optional() private readonly dataSource?: DataSource,
    @Optional() @Inject(REDIS) private readonly redis?: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.nats?.drain();
    if (this.dataSource?.isInitialized) await this.dataSource.destroy();
    if (this.redis && this.redis.status !== 'end') this.redis.disconnect();
  }
}
