import { Redis, type RedisOptions } from 'ioredis';
import { redisTls } from '#libs/config';

/**
 * A Redis client that keeps retrying in the background and never queues commands while down
 * (they fail at once). `options` adds to that, e.g. a `commandTimeout` for a caller that must
 * not wait on a Redis that hangs. A rediss:// URL connects over TLS, the server's certificate
 * verified against `tlsCaFile` (REDIS_TLS_CA_FILE) or the system's CAs.
 */
export function createRedis(url: string, name: string, options: RedisOptions = {}, tlsCaFile?: string): Redis {
  const tls = redisTls(url, tlsCaFile);
  return new Redis(url, {
    ...(tls ? { tls } : {}),
    connectionName: name,
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...options,
  });
}
export type { Redis, RedisOptions };
