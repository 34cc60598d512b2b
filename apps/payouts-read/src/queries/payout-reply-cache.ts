import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { BroadcastSubjects } from '#libs/contracts';
import { LOGGER } from '#libs/bootstrap';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { PayoutsReadEnv } from '../config/payouts-read.env.js';

const lookups = counter('weave_payout_reply_cache_total', 'Payout replies served from the cache or the database', ['source']);
const MAX_ENTRIES_PER_PLATFORM = 200;

interface Entry {
  value: unknown;
  expiresAt: number;
}

/**
 * Replies of one platform cached until its read model changes. The replica that commits payout
 * events announces the platforms on `payouts.v1.changed`; every replica drops their entries.
 * PAYOUTS_CACHE_TTL_MS bounds staleness should an announcement be missed. A per-platform
 * generation keeps a query that started before a change from caching its older answer.
 */
@Injectable()
export class PayoutReplyCache implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly platforms = new Map<string, { generation: number; entries: Map<string, Entry> }>();
  private subscription?: Subscription;

  constructor(
    private readonly nats: NatsClient,
    private readonly env: PayoutsReadEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.nats.connection.subscribe(BroadcastSubjects.payoutsChanged, {
      callback: (error, msg) => {
        if (error) {
          this.platforms.clear();
          return;
        }
        try {
          const { agent_ids } = msg.json<{ agent_ids: string[] }>();
          for (const agentId of agent_ids) this.forget(agentId);
        } catch {
          this.platforms.clear();
        }
      },
    });
  }

  beforeApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  async reply<T>(agentId: string, key: string, load: () => Promise<T>): Promise<T> {
    const ttl = this.env.PAYOUTS_CACHE_TTL_MS;
    if (ttl <= 0) return load();
    let platform = this.platforms.get(agentId);
    if (!platform) this.platforms.set(agentId, (platform = { generation: 0, entries: new Map() }));
    const cached = platform.entries.get(key);
    if (cached && cached.expiresAt > Date.now()) {
      lookups.inc({ source: 'cache' });
      return cached.value as T;
    }
    lookups.inc({ source: 'database' });
    const generation = platform.generation;
    const value = await load();
    if (platform.generation === generation && this.platforms.get(agentId) === platform) {
      if (platform.entries.size >= MAX_ENTRIES_PER_PLATFORM) platform.entries.delete(platform.entries.keys().next().value!);
      platform.entries.set(key, { value, expiresAt: Date.now() + ttl });
    }
    return value;
  }

  forget(agentId: string): void {
    const platform = this.platforms.get(agentId);
    if (!platform) return;
    platform.generation += 1;
    platform.entries.clear();
  }

  /** Tells every replica which platforms changed (after commit). Failure only delays freshness to the TTL. */
  announce(agentIds: string[]): void {
    if (agentIds.length === 0) return;
    for (const agentId of agentIds) this.forget(agentId);
    try {
      this.nats.connection.publish(BroadcastSubjects.payoutsChanged, JSON.stringify({ agent_ids: agentIds }));
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'could not announce payout changes; caches expire by TTL');
    }
  }
}
