import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { LOGGER } from '#libs/bootstrap';
import { BroadcastSubjects } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { counter, gauge, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { compress, type ContentEncoding } from './content-encoding.js';

const lookups = counter('weave_gateway_payout_cache_total', 'Payout replies the gateway served from its cache (hit), fetched (miss) or joined to a fetch in flight (shared)', ['outcome']);
const flushes = counter('weave_gateway_payout_cache_flushes_total', 'Whole-cache flushes of the gateway payout cache, by cause', ['cause']);
let bytesGauge: { bytes: number; entries: number }[] = [];
gauge('weave_gateway_payout_cache_bytes', 'Bytes held by the gateway payout cache (bodies and their compressed forms)', [], function () {
  this.set(bytesGauge.reduce((sum, cache) => sum + cache.bytes, 0));
});

/** A payout reply as the gateway sends it: the JSON bytes from payouts-read, and compressed forms on demand. */
export interface PayoutReply {
  readonly body: Buffer;
  /** True when the body is large enough to be worth compressing (PAYOUTS_CACHE_MIN_BYTES). */
  readonly large: boolean;
  /** The body compressed with `encoding`, computed once per cached reply. */
  encoded(encoding: ContentEncoding): Promise<Buffer>;
}

/** A reply that is not kept (small, disabled cache, or fetched across an invalidation). */
class PassingReply implements PayoutReply {
  constructor(
    readonly body: Buffer,
    readonly large: boolean,
  ) {}

  encoded(encoding: ContentEncoding): Promise<Buffer> {
    return compress(this.body, encoding);
  }
}

class Entry implements PayoutReply {
  readonly large = true;
  /** body + the compressed forms computed so far, as counted in the cache's total. */
  bytes: number;
  removed = false;
  private readonly variants = new Map<ContentEncoding, Promise<Buffer>>();

  constructor(
    readonly key: string,
    readonly agentId: string,
    readonly body: Buffer,
    readonly expiresAt: number,
    private readonly cache: PayoutsReplyCache,
  ) {
    this.bytes = body.length;
  }

  encoded(encoding: ContentEncoding): Promise<Buffer> {
    let variant = this.variants.get(encoding);
    if (!variant) {
      variant = compress(this.body, encoding);
      this.variants.set(encoding, variant);
      void variant.then(
        (compressed) => this.cache.grew(this, compressed.length),
        () => this.variants.delete(encoding),
      );
    }
    return variant;
  }
}

interface PlatformState {
  /** Bumped by every invalidation of the platform: a fetch that began before it is not kept. */
  generation: number;
  keys: Set<string>;
  /** Fetches in flight (the state is dropped when it holds nothing and nothing is in flight). */
  fetching: number;
}

interface Inflight {
  generation: number;
  epoch: number;
  promise: Promise<PayoutReply>;
}

/**
 * The gateway's cache of large payout replies (a 100-statement page is 70 KB), so a hot page
 * is neither fetched from payouts-read over NATS nor compressed again for every request.
 *
 * - Keys: platform (from the ID token, never from the request) + route + normalized query.
 *   A platform can only ever be answered from its own entries.
 * - Freshness: payouts-read announces on `payouts.v1.changed` (core NATS, after commit) the
 *   platforms whose read model changed; every gateway replica drops their entries at once.
 *   A per-platform generation, bumped by each announcement, keeps a fetch that was in flight
 *   across it from storing its possibly older bytes. PAYOUTS_CACHE_TTL_MS bounds staleness
 *   should an announcement be missed; a NATS disconnect or reconnect (announcements may have
 *   been missed) or a subscription error flushes everything.
 * - Size: replies below PAYOUTS_CACHE_MIN_BYTES are not kept (they cost little through NATS
 *   and stay on the live path); the bodies and their compressed forms are bounded by
 *   PAYOUTS_CACHE_MAX_BYTES, least recently used first out.
 * - Concurrent misses of one key within one generation share one fetch.
 */
@Injectable()
export class PayoutsReplyCache implements OnModuleInit, BeforeApplicationShutdown {
  /** In least-recently-used order (a hit moves its entry to the end). */
  private readonly entries = new Map<string, Entry>();
  private readonly platforms = new Map<string, PlatformState>();
  private readonly inflight = new Map<string, Inflight>();
  /** Bumped by every flush: fetches begun before it are not kept. */
  private epoch = 0;
  private readonly totals = { bytes: 0, entries: 0 };
  private subscription?: Subscription;
  private statusWatch?: { stop?: () => void };

  constructor(
    private readonly nats: NatsClient,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.env.PAYOUTS_CACHE_TTL_MS > 0 && this.env.PAYOUTS_CACHE_MAX_BYTES > 0;
  }

  onModuleInit(): void {
    bytesGauge.push(this.totals);
    this.subscription = this.nats.connection.subscribe(BroadcastSubjects.payoutsChanged, {
      callback: (error, msg) => {
        if (error) {
          this.logger.warn({ err: error.message }, 'payouts.v1.changed subscription error; payout cache flushed');
          this.flush('subscription_error');
          return;
        }
        let agentIds: unknown;
        try {
          agentIds = msg.json<{ agent_ids?: unknown }>().agent_ids;
        } catch {
          agentIds = undefined;
        }
        if (!Array.isArray(agentIds)) {
          this.flush('unreadable_announcement');
          return;
        }
        for (const agentId of agentIds) if (typeof agentId === 'string') this.forget(agentId);
      },
    });
    // Announcements sent while the connection was down are lost: start over after it.
    const status = this.nats.connection.status();
    this.statusWatch = status as { stop?: () => void };
    void (async () => {
      for await (const event of status) {
        if (event.type === 'disconnect' || event.type === 'reconnect') this.flush(event.type);
      }
    })();
  }

  beforeApplicationShutdown(): void {
    this.subscription?.unsubscribe();
    this.statusWatch?.stop?.();
    bytesGauge = bytesGauge.filter((totals) => totals !== this.totals);
  }

  /**
   * The reply for `key` of `agentId`: from the cache, else from `fetch` (which throws for
   * anything but a successful reply; failures are never cached).
   */
  async reply(agentId: string, key: string, fetch: () => Promise<Buffer>): Promise<PayoutReply> {
    if (!this.enabled) {
      const body = await fetch();
      return new PassingReply(body, body.length >= this.env.PAYOUTS_CACHE_MIN_BYTES);
    }
    const fullKey = `${agentId}\u0000${key}`;
    const entry = this.entries.get(fullKey);
    if (entry) {
      if (entry.expiresAt > Date.now()) {
        this.entries.delete(fullKey);
        this.entries.set(fullKey, entry);
        lookups.inc({ outcome: 'hit' });
        return entry;
      }
      this.remove(entry);
    }
    let platform = this.platforms.get(agentId);
    if (!platform) this.platforms.set(agentId, (platform = { generation: 0, keys: new Set(), fetching: 0 }));
    const { generation } = platform;
    const epoch = this.epoch;
    const joined = this.inflight.get(fullKey);
    if (joined && joined.generation === generation && joined.epoch === epoch) {
      lookups.inc({ outcome: 'shared' });
      return joined.promise;
    }
    lookups.inc({ outcome: 'miss' });
    const state = platform;
    state.fetching += 1;
    const inflight = { generation, epoch } as Inflight;
    this.inflight.set(fullKey, inflight);
    inflight.promise = (async () => {
      try {
        return this.keep(state, generation, epoch, agentId, fullKey, await fetch());
      } finally {
        state.fetching -= 1;
        if (this.inflight.get(fullKey) === inflight) this.inflight.delete(fullKey);
        this.prune(agentId, state);
      }
    })();
    return inflight.promise;
  }

  /** Drops a platform's entries; fetches of it in flight will not be kept. */
  forget(agentId: string): void {
    const platform = this.platforms.get(agentId);
    if (!platform) return;
    platform.generation += 1;
    for (const key of platform.keys) {
      const entry = this.entries.get(key);
      if (entry) this.remove(entry);
    }
    this.prune(agentId, platform);
  }

  /** Drops everything; no fetch in flight will be kept. */
  flush(cause: string): void {
    this.epoch += 1;
    for (const platform of this.platforms.values()) platform.generation += 1;
    for (const entry of [...this.entries.values()]) this.remove(entry);
    for (const [agentId, platform] of this.platforms) this.prune(agentId, platform);
    flushes.inc({ cause });
  }

  /** What the cache holds (for tests and diagnostics). */
  stats(): { entries: number; bytes: number; platforms: number } {
    return { entries: this.totals.entries, bytes: this.totals.bytes, platforms: this.platforms.size };
  }

  /** Called when a compressed form of a kept entry is ready. */
  grew(entry: Entry, bytes: number): void {
    if (entry.removed) return;
    entry.bytes += bytes;
    this.totals.bytes += bytes;
    this.evict();
  }

  private keep(platform: PlatformState, generation: number, epoch: number, agentId: string, fullKey: string, body: Buffer): PayoutReply {
    const large = body.length >= this.env.PAYOUTS_CACHE_MIN_BYTES;
    // An invalidation or flush came while fetching: these bytes may predate it.
    if (!large || platform.generation !== generation || this.epoch !== epoch || body.length > this.env.PAYOUTS_CACHE_MAX_BYTES) {
      return new PassingReply(body, large);
    }
    const previous = this.entries.get(fullKey);
    if (previous) this.remove(previous);
    const entry = new Entry(fullKey, agentId, body, Date.now() + this.env.PAYOUTS_CACHE_TTL_MS, this);
    this.entries.set(fullKey, entry);
    platform.keys.add(fullKey);
    this.totals.entries += 1;
    this.totals.bytes += entry.bytes;
    this.evict();
    return entry;
  }

  private remove(entry: Entry): void {
    if (entry.removed) return;
    entry.removed = true;
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    this.platforms.get(entry.agentId)?.keys.delete(entry.key);
    this.totals.entries -= 1;
    this.totals.bytes -= entry.bytes;
  }

  private evict(): void {
    for (const entry of this.entries.values()) {
      if (this.totals.bytes <= this.env.PAYOUTS_CACHE_MAX_BYTES) return;
      this.remove(entry);
      this.prune(entry.agentId, this.platforms.get(entry.agentId));
    }
  }

  /** Forgets the state of a platform that holds nothing and fetches nothing (its generation no longer matters). */
  private prune(agentId: string, platform: PlatformState | undefined): void {
    if (platform && platform.keys.size === 0 && platform.fetching === 0 && this.platforms.get(agentId) === platform) this.platforms.delete(agentId);
  }
}
