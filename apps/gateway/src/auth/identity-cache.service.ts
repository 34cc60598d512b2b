import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { ScopedCache, invalidateOnBroadcast, type BroadcastInvalidation } from '#libs/cache';
import { BroadcastSubjects } from '#libs/contracts';
import { IdentityRepository, decodeIdentityChanged, hashApiKeyBase64, type ActiveKey, type PlatformStatus } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

const lookups = counter('weave_identity_lookups_total', 'API-key, platform-owner and platform-status lookups by the gateway', ['source']);
const SOURCES = { hit: 'cache', shared: 'shared', miss: 'database' } as const;
/** Identity entries are not grouped: a change drops them all. */
const SCOPE = 'identity';


/**
 * API-key lookups with a short in-process cache (positive and negative), so a busy platform
 * costs one query per TTL per replica instead of one per request.
 *
 * Freshness: entries live at most IDENTITY_CACHE_TTL_MS (≤ 500 ms), and the whole cache is
 * dropped when an `identity.v1.changed` broadcast arrives (and on a NATS disconnect or
 * reconnect, when one may have been missed). Changes are rare operator actions, so dropping
 * everything is cheaper to get right than matching entries. A lookup that started before a
 * broadcast does not write its (possibly stale) answer into the cache after it. Concurrent
 * lookups of one key share one query (#libs/cache).
 *
 * Entries are keyed by the SHA-256 of the key, never by the key itself.
 */
@Injectable()
export class IdentityCacheService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly cache: ScopedCache<unknown>;
  private invalidation?: BroadcastInvalidation;

  constructor(
    private readonly repository: IdentityRepository,
    private readonly nats: NatsClient,
    env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.cache = new ScopedCache<unknown>({
      maxEntries: env.IDENTITY_CACHE_MAX_ENTRIES,
      ttlMs: env.IDENTITY_CACHE_TTL_MS,
      onLookup: (outcome) => lookups.inc({ source: SOURCES[outcome] }),
    });
  }

  onModuleInit(): void {
    this.invalidation = invalidateOnBroadcast(this.nats.connection, this.cache, {
      subject: BroadcastSubjects.identityChanged,
      scopesOf: (data) => {
        this.logger.debug({ change: decodeIdentityChanged(data) }, 'identity changed: cache dropped');
        return { flush: 'identity_changed' };
      },
      onFlush: (cause, error) => {
        if (error) this.logger.warn({ err: error.message }, 'identity broadcast subscription error; relying on the cache TTL');
      },
    });
  }

  beforeApplicationShutdown(): void {
    this.invalidation?.stop();
  }

  invalidateAll(): void {
    this.cache.flush();
  }

  /** The active key for this secret, or null (unknown, revoked, malformed). Rejects when the database fails. */
  lookup(secret: string): Promise<ActiveKey | null> {
    const id = `key:${hashApiKeyBase64(secret)}`;
    return this.cache.fetch(SCOPE, id, () => this.repository.findActiveKeyBySecret(secret));
  }

  /** A platform's status (null: no such platform), with the same freshness as keys: a suspension is seen within a second. */
  async platformStatus(agentId: string): Promise<PlatformStatus | null> {
    const platform = await this.cache.fetch(SCOPE, `platform:${agentId}`, () => this.repository.findPlatform(agentId));
    return platform?.status ?? null;
  }

  /** The platforms an ID token's `sub` owns, with the same freshness as keys (suspension included). */
  platformsOwnedBy(sub: string): Promise<{ agent_id: string; status: string }[]> {
    return this.cache.fetch(SCOPE, `owner:${sub}`, () => this.repository.platformsOwnedBy(sub));
  }
}
