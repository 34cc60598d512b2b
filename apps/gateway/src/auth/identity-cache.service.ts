import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { LOGGER } from '#libs/bootstrap';
import { BroadcastSubjects } from '#libs/contracts';
import { IdentityRepository, decodeIdentityChanged, hashApiKey, type ActiveKey } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

const lookups = counter('weave_identity_lookups_total', 'API-key and platform-owner lookups by the gateway', ['source']);

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * API-key lookups with a short in-process cache (positive and negative), so a busy platform
 * costs one query per TTL per replica instead of one per request.
 *
 * Freshness: entries live at most IDENTITY_CACHE_TTL_MS (≤ 500 ms), and the whole cache is
 * dropped when an `identity.v1.changed` broadcast arrives. Changes are rare operator actions,
 * so dropping everything is cheaper to get right than matching entries. A generation counter
 * keeps a lookup that started before a broadcast from writing its (possibly stale) answer
 * into the cache after it. Concurrent lookups of one key share one query.
 *
 * Entries are keyed by the SHA-256 of the key, never by the key itself.
 */
@Injectable()
export class IdentityCacheService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly inflight = new Map<string, Promise<unknown>>();
  private generation = 0;
  private subscription?: Subscription;

  constructor(
    private readonly repository: IdentityRepository,
    private readonly nats: NatsClient,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.subscription = this.nats.connection.subscribe(BroadcastSubjects.identityChanged, {
      callback: (error, msg) => {
        if (error) {
          this.logger.warn({ err: error.message }, 'identity broadcast subscription error; relying on the cache TTL');
          this.invalidateAll();
          return;
        }
        const change = decodeIdentityChanged(msg.data);
        this.invalidateAll();
        this.logger.debug({ change }, 'identity changed: cache dropped');
      },
    });
  }

  beforeApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  invalidateAll(): void {
    this.generation++;
    this.entries.clear();
    this.inflight.clear();
  }

  /** The active key for this secret, or null (unknown, revoked, malformed). Rejects when the database fails. */
  lookup(secret: string): Promise<ActiveKey | null> {
    return this.cached(`key:${hashApiKey(secret).toString('base64')}`, () => this.repository.findActiveKeyBySecret(secret));
  }

  /** The platforms an ID token's `sub` owns, with the same freshness as keys (suspension included). */
  platformsOwnedBy(sub: string): Promise<{ agent_id: string; status: string }[]> {
    return this.cached(`owner:${sub}`, () => this.repository.platformsOwnedBy(sub));
  }

  private cached<T>(id: string, load: () => Promise<T>): Promise<T> {
    const cached = this.entries.get(id);
    if (cached) {
      if (cached.expiresAt > Date.now()) {
        lookups.inc({ source: 'cache' });
        return Promise.resolve(cached.value as T);
      }
      this.entries.delete(id);
    }
    const pending = this.inflight.get(id);
    if (pending) {
      lookups.inc({ source: 'shared' });
      return pending as Promise<T>;
    }
    lookups.inc({ source: 'database' });
    const generation = this.generation;
    const promise = load()
      .then((value) => {
        if (generation === this.generation) this.store(id, value);
        return value;
      })
      .finally(() => {
        if (this.inflight.get(id) === promise) this.inflight.delete(id);
      });
    this.inflight.set(id, promise);
    return promise;
  }

  private store(id: string, value: unknown): void {
    const ttl = this.env.IDENTITY_CACHE_TTL_MS;
    const max = this.env.IDENTITY_CACHE_MAX_ENTRIES;
    if (ttl <= 0 || max <= 0) return;
    this.entries.delete(id);
    while (this.entries.size >= max) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.set(id, { value, expiresAt: Date.now() + ttl });
  }
}
