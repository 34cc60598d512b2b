import { Redis, type RedisOptions } from 'ioredis';

/**
 * A Redis client that keeps retrying in the background and never queues commands while down
 * (they fail at once). `options` adds to that, e.g. a `commandTimeout` for a caller that must
 * not wait on a Redis that hangs.
 */
export function createRedis(url: string, name: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectionName: name,
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...options,
  });
}
export type { Redis, RedisOptions };
