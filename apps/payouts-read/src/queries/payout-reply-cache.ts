import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { BroadcastCache } from '#libs/cache';
import { BroadcastSubjects, decodePayoutsChanged, encodePayoutsChanged } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { PayoutsReadEnv } from '../config/payouts-read.env.js';

const lookups = counter('weave_payout_reply_cache_total', 'Payout replies served from the cache, a query in flight (shared) or the database', ['source']);
const SOURCES = { hit: 'cache', shared: 'shared', miss: 'database' } as const;
/** Replies kept per replica at most (besides PAYOUTS_CACHE_MAX_BYTES). */
const MAX_ENTRIES = 10_000;

/**
 * Replies of one platform cached until its read model changes. The replica that commits payout
 * events announces the platforms on `payouts.v1.changed`; every replica drops their entries
 * (and everything on a NATS disconnect or reconnect, when announcements may have been lost).
 * PAYOUTS_CACHE_TTL_MS bounds staleness should an announcement be missed. A query that started
 * before a change of its platform does not cache its older answer, and concurrent misses of
 * one query share it (#libs/cache). Pages past the last one are answered but not kept
 * (PayoutsController): hostile paging cannot fill the cache.
 */
@Injectable()
export class PayoutReplyCache extends BroadcastCache<unknown> implements OnModuleInit, BeforeApplicationShutdown {
  constructor(
    private readonly nats: NatsClient,
    env: PayoutsReadEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super(
      nats.connection,
      {
        maxEntries: MAX_ENTRIES,
        maxBytes: env.PAYOUTS_CACHE_MAX_BYTES,
        sizeOf: serializedBytes,
        ttlMs: env.PAYOUTS_CACHE_TTL_MS,
        onLookup: (outcome) => lookups.inc({ source: SOURCES[outcome] }),
      },
      {
        subject: BroadcastSubjects.payoutsChanged,
        scopesOf: (data) => decodePayoutsChanged(data) ?? { flush: 'unreadable_announcement' },
      },
    );
  }

  /** The reply for `key` of `agentId`, cached unless `keep` says no (a page past the last one). */
  reply<T>(agentId: string, key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T> {
    return this.cache.fetch(agentId, key, load, { keep });
  }

  forget(agentId: string): void {
    this.cache.invalidate(agentId);
  }

  /** Tells every replica which platforms changed (after commit). Failure only delays freshness to the TTL. */
  announce(agentIds: string[]): void {
    if (agentIds.length === 0) return;
    for (const agentId of agentIds) this.forget(agentId);
    try {
      this.nats.connection.publish(BroadcastSubjects.payoutsChanged, encodePayoutsChanged(agentIds));
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'could not announce payout changes; caches expire by TTL');
    }
  }
}

/** The bytes of a serialized reply (its JSON text or its encoded bytes); 0 for anything else. */
function serializedBytes(reply: unknown): number {
  const { json, bytes } = (reply ?? {}) as { json?: unknown; bytes?: unknown };
  if (typeof json === 'string') return Buffer.byteLength(json);
  if (bytes instanceof Uint8Array) return bytes.byteLength;
  return 0;
}
