import type { NatsConnection } from '@nats-io/transport-node';
import { invalidateOnBroadcast, type BroadcastInvalidation, type BroadcastInvalidationOptions } from './broadcast-invalidation.js';
import { ScopedCache, type ScopedCacheOptions } from './scoped-cache.js';

/**
 * The base of a cache provider kept in step with change announcements: its ScopedCache listens
 * to `broadcast` (invalidateOnBroadcast: the scopes a message names, everything on a NATS
 * disconnect or reconnect) from module init unless it is disabled, and stops listening before shutdown (the Nest
 * lifecycle hooks of the subclass, which adds what its replies need).
 */
export abstract class BroadcastCache<V> {
  protected readonly cache: ScopedCache<V>;
  private invalidation?: BroadcastInvalidation;

  constructor(
    private readonly connection: NatsConnection,
    options: ScopedCacheOptions<V>,
    private readonly broadcast: BroadcastInvalidationOptions,
  ) {
    this.cache = new ScopedCache<V>(options);
  }

  /** False when the cache holds nothing (its byte or entry bound is 0). */
  get enabled(): boolean {
    return this.cache.enabled;
  }

  onModuleInit(): void {
    if (!this.cache.enabled) return;
    this.invalidation = invalidateOnBroadcast(this.connection, this.cache, this.broadcast);
  }

  beforeApplicationShutdown(): void {
    this.invalidation?.stop();
  }
}
