import { Inject, Injectable, Optional, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { NatsClient, ensureStreams, type StreamRetention } from '#libs/nats';
import { initializeDatabase, isTransientDatabaseError } from '#libs/database';
import { describeConnectionError, redactUrl } from '#libs/connections';
import { LOGGER, type DependencyCheck, type Logger } from '#libs/observability';
import { natsIdentity, natsTls, streamRetention, type NatsIdentity, type NatsTls, type ServerEnv } from '#libs/config';
import { connectWithRetry } from './connect-retry.js';
import { createRedis } from './redis.js';

export { LOGGER };
export const REDIS = Symbol('REDIS');

export function loggerProvider(logger: Logger): Provider {
  return { provide: LOGGER, useValue: logger };
}

/** The NATS identity (DESIGN §8), stream retention and stream replicas a service's env asks for. */
export interface NatsSettings {
  identity?: NatsIdentity;
  tls?: NatsTls;
  retention?: StreamRetention;
  replicas?: number;
}

export function natsSettings(env: ServerEnv): NatsSettings {
  return { identity: natsIdentity(env), tls: natsTls(env), retention: streamRetention(env), replicas: env.NATS_STREAM_REPLICAS };
}

/** Connects to NATS (as the env's user) and creates the JetStream streams of DESIGN §4 with the env's retention and replicas (idempotent). */
export function natsProvider(servers: string[], name: string, settings: NatsSettings = {}): Provider {
  return {
    provide: NatsClient,
    inject: [LOGGER],
    useFactory: async (logger: Logger) => {
      const nats = await connectWithRetry({
        server: 'NATS',
        target: servers.map(redactUrl).join(','),
        logger,
        attempt: () => NatsClient.connect({ servers, name, logger, identity: settings.identity, tls: settings.tls }),
      });
      await ensureStreams(nats.manager, { retention: settings.retention, replicas: settings.replicas, logger });
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
    inject: [LOGGER],
    useFactory: async (logger: Logger) => {
      // A service started before PostgreSQL (or while it restarts) waits for it.
      let dataSource = create();
      return connectWithRetry({
        server: 'PostgreSQL',
        target: redactUrl((dataSource.options as { url: string }).url),
        logger,
        retryable: (error) => isTransientDatabaseError(error) || ['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'].includes((error as { code?: string }).code ?? ''),
        attempt: async () => {
          try {
            await initializeDatabase(dataSource);
            return dataSource;
          } catch (error) {
            // A pool that failed half-way is not reused: the next attempt starts afresh.
            if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
            dataSource = create();
            throw error;
          }
        },
      });
    },
  };
}

/** `tlsCaFile`: REDIS_TLS_CA_FILE, the CA of a rediss:// server's certificate. */
export function redisProvider(url: string, name: string, tlsCaFile?: string): Provider {
  return {
    provide: REDIS,
    inject: [LOGGER],
    useFactory: (logger: Logger) => {
      const redis = createRedis(url, name, {}, tlsCaFile);
      const target = redactUrl(url);
      let connectedOnce = false;
      let attempts = 0;
      let lastWarning = 0;
      redis.on('ready', () => {
        connectedOnce = true;
      });
      redis.on('error', (error) => {
        // Redis is a cache here: the service keeps serving without it (not ready, though). Until
        // it first answers, one line per attempt; after an outage begins, at most one per 10 s.
        attempts += 1;
        const reason = describeConnectionError(error);
        if (!connectedOnce) {
          logger.warn({ server: 'Redis', url: target, attempt: attempts, reason }, `Redis not reachable at ${target} (${reason}); attempt ${attempts} failed, retrying`);
        } else if (Date.now() - lastWarning > 10000) {
          lastWarning = Date.now();
          logger.warn({ server: 'Redis', url: target, reason }, `Redis unavailable at ${target} (${reason}); retrying`);
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
