import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { ScopedCache, invalidateOnBroadcast, type BroadcastInvalidation } from '#libs/cache';
import { BroadcastSubjects } from '#libs/contracts';
import { IdentityRepository, decodeIdentityChanged, hashApiKeyBase64, type ActiveKey, type PlatformStatus } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

const lookups = counter('weave_identity_lookups_total', 'API-key, platform-owner and platform-status lookups by the gateway', ['source']);
const SOURCES = { hit: 'cache', shared: 'shared', miss: 'database' } as const;
const drops = counter(
  'weave_identity_cache_drops_total',
  "Drops of the gateway's identity cache by cause: whole (version_changed, version_unknown, version_poll_failed, version_poll_overdue, identity_changed, disconnect, reconnect, subscription_error) or one platform's entries (identity_changed_platform)",
  ['cause'],
);

/** Key lookups are fetched in this scope (positive answers are kept in their platform's scope, negative ones here). */
const KEYS = 'keys';
/** Owner lookups (a platform's owner may change to anyone: a change of any platform drops them all). */
const OWNERS = 'owners';
/** A platform's status and its keys' positive lookups. */
const platformScope = (agentId: string) => `platform:${agentId}`;

/**
 * API-key, platform-status and owner lookups with an in-process cache (positive and negative),
 * so a busy platform costs one query per change instead of one per request.
 *
 * Freshness (DESIGN §7: a revoked key or a suspended platform is refused everywhere within a
 * second), from two sources:
 * - the `identity.v1.changed` broadcast, the fastest path: a message naming a platform drops that
 *   platform's status and key lookups, every negative key lookup and every owner lookup; one
 *   naming none (or unreadable) drops everything, and so does a NATS disconnect or reconnect,
 *   when one may have been missed;
 * - the identity version (migration 1795760000000), which the database moves with every such
 *   change: each replica reads it every IDENTITY_VERSION_POLL_MS (one query per replica, not per
 *   key) and drops everything when it moved, when a read fails or when one is still unanswered
 *   at the next tick (fail safe). This bounds staleness to the poll interval plus a query even
 *   when a broadcast is missed.
 * IDENTITY_CACHE_TTL_MS is then only the bound on how long an unused entry takes memory.
 *
 * A lookup that started before a drop of its entry does not write its (possibly stale) answer
 * into the cache after it (ScopedCache's generations and epoch). Concurrent lookups of one key
 * share one query. Entries are keyed by the SHA-256 of the key, never by the key itself.
 */
@Injectable()
export class IdentityCacheService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly cache: ScopedCache<unknown>;
  private readonly pollMs: number;
  private invalidation?: BroadcastInvalidation;
  private poller?: NodeJS.Timeout;
  private polling?: Promise<void>;
  /** The identity version the cache is consistent with; undefined before the first read and after a failed one. */
  private version?: string;
  private pollFailing = false;
  /** Shutting down: a read still in flight may fail as the pool closes, which says nothing. */
  private stopped = false;

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
    this.pollMs = env.IDENTITY_VERSION_POLL_MS;
  }

  onModuleInit(): void {
    this.invalidation = invalidateOnBroadcast(this.nats.connection, this.cache, {
      subject: BroadcastSubjects.identityChanged,
      scopesOf: (data) => {
        const change = decodeIdentityChanged(data);
        this.logger.debug({ change }, change.agent_id ? "identity changed: the platform's entries dropped" : 'identity changed: cache dropped');
        if (!change.agent_id) return { flush: 'identity_changed' };
        drops.inc({ cause: 'identity_changed_platform' });
        return this.scopesOfPlatform(change.agent_id);
      },
      onFlush: (cause, error) => {
        drops.inc({ cause });
        if (error) this.logger.warn({ err: error.message }, 'identity broadcast subscription error; relying on the identity version poll');
      },
    });
  }

  onApplicationBootstrap(): void {
    if (!this.cache.enabled) return;
    this.poller = setInterval(() => this.tick(), this.pollMs);
    this.poller.unref();
    this.tick();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.poller);
    this.poller = undefined;
    this.invalidation?.stop();
  }

  /** Drops what this replica keeps about one platform: its status and keys, every negative key lookup, every owner lookup. */
  invalidatePlatform(agentId: string): void {
    for (const scope of this.scopesOfPlatform(agentId)) this.cache.invalidate(scope);
  }

  /**
   * The active key for this secret, or null (unknown, revoked, malformed). Rejects when the
   * database fails. `gate`: runs the database lookup when the cache does not answer (the rate
   * limiter queues the lookups of a client blocked for failed authentications).
   */
  lookup(secret: string, gate?: <T>(lookup: () => Promise<T>) => Promise<T>): Promise<ActiveKey | null> {
    const id = `key:${hashApiKeyBase64(secret)}`;
    const find = () => this.repository.findActiveKeyBySecret(secret);
    return this.cache.fetch(KEYS, id, gate ? () => gate(find) : find, {
      keepIn: (key) => (key ? platformScope(key.agent_id) : undefined),
    });
  }

  /** A platform's status (null: no such platform), with the same freshness as keys: a suspension is seen within a second. */
  async platformStatus(agentId: string): Promise<PlatformStatus | null> {
    const platform = await this.cache.fetch(platformScope(agentId), `platform:${agentId}`, () => this.repository.findPlatform(agentId));
    return platform?.status ?? null;
  }

  /** The platforms an ID token's `sub` owns, with the same freshness as keys (suspension included). */
  platformsOwnedBy(sub: string): Promise<{ agent_id: string; status: string }[]> {
    return this.cache.fetch(OWNERS, `owner:${sub}`, () => this.repository.platformsOwnedBy(sub));
  }

  /**
   * The platform's own scope, and the key and owner scopes: key lookups in flight are fetched in
   * KEYS whatever their platform (so invalidating KEYS keeps none of them), and a key created or
   * a platform given an owner may turn a negative answer kept there into a positive one.
   */
  private scopesOfPlatform(agentId: string): string[] {
    return [platformScope(agentId), KEYS, OWNERS];
  }

  /** Starts a read of the identity version, unless one is still unanswered: then the cache cannot be trusted, and is dropped. */
  private tick(): void {
    if (this.polling) {
      this.version = undefined;
      this.drop('version_poll_overdue');
      return;
    }
    this.polling = this.poll().finally(() => (this.polling = undefined));
  }

  private async poll(): Promise<void> {
    try {
      const version = await this.repository.identityVersion();
      if (this.pollFailing) this.logger.info({ version }, 'identity version read again');
      this.pollFailing = false;
      if (version === this.version) return;
      // A change since the last read, or no trustworthy last read: entries may predate a change.
      const cause = this.version === undefined ? 'version_unknown' : 'version_changed';
      this.version = version;
      this.drop(cause);
    } catch (error) {
      this.version = undefined;
      this.drop('version_poll_failed');
      if (!this.pollFailing && !this.stopped) this.logger.warn({ err: (error as Error).message }, 'identity version could not be read; identity cache dropped until it can');
      this.pollFailing = true;
    }
  }

  private drop(cause: string): void {
    this.cache.flush();
    drops.inc({ cause });
  }
}
