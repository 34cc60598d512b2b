import { Redis } from 'ioredis';

/** A Redis client that keeps retrying in the background and never throws on commands queued while down. */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}
export type { Redis };
