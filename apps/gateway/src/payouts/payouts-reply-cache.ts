import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { BroadcastCache } from '#libs/cache';
import { BroadcastSubjects, decodePayoutsChanged } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { counter, gauge, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { compress, type ContentEncoding } from './content-encoding.js';

const lookups = counter('weave_gateway_payout_cache_total', 'Payout replies the gateway served from its cache (hit), fetched (miss) or joined to a fetch in flight (shared)', ['outcome']);
const flushes = counter('weave_gateway_payout_cache_flushes_total', 'Whole-cache flushes of the gateway payout cache, by cause', ['cause']);
let caches: PayoutsReplyCache[] = [];
gauge('weave_gateway_payout_cache_bytes', 'Bytes held by the gateway payout cache (bodies, their compressed forms, keys and per-entry overhead)', [], function () {
  this.set(caches.reduce((sum, cache) => sum + cache.stats().bytes, 0));
});
/** Replies kept at most, besides PAYOUTS_CACHE_MAX_BYTES (which counts ≥ 128 bytes an entry). */
const MAX_ENTRIES = 50_000;
/** A page past the last one is `{"items":[],"page":…,"page_size":…,"total":…}`: well under this. */
const EMPTY_PAGE_MAX_BYTES = 256;

/**
 * Whether a list reply is a page with no items beyond page 1 (past the last page). Only small
 * bodies are parsed: a page with items is larger than an empty one.
 */
export function isPastLastPage(body: Buffer): boolean {
  if (body.length > EMPTY_PAGE_MAX_BYTES) return false;
  try {
    const page = JSON.parse(body.toString('utf8')) as { items?: unknown; page?: unknown };
    return Array.isArray(page.items) && page.items.length === 0 && typeof page.page === 'number' && page.page > 1;
  } catch {
    return false;
  }
}

/** A payout reply as the gateway sends it: the JSON bytes from payouts-read, and compressed forms on demand. */
export interface PayoutReply {
  readonly body: Buffer;
  /** True when the body is large enough to be worth compressing (PAYOUTS_CACHE_MIN_BYTES). */
  readonly large: boolean;
  /** The body compressed with `encoding`, computed once per reply. */
  encoded(encoding: ContentEncoding): Promise<Buffer>;
}

/** A reply and the compressed forms computed so far; `grew` tells the cache that holds it. */
class Reply implements PayoutReply {
  /** body + the compressed forms computed so far, as the cache counts it. */
  bytes: number;
  grew?: () => void;
  private readonly variants = new Map<ContentEncoding, Promise<Buffer>>();

  constructor(
    readonly body: Buffer,
    readonly large: boolean,
  ) {
    this.bytes = body.length;
  }

  encoded(encoding: ContentEncoding): Promise<Buffer> {
    let variant = this.variants.get(encoding);
    if (!variant) {
      variant = compress(this.body, encoding);
      this.variants.set(encoding, variant);
      void variant.then(
        (compressed) => {
          this.bytes += compressed.length;
          this.grew?.();
        },
        () => this.variants.delete(encoding),
      );
    }
    return variant;
  }
}

/**
 * The gateway's cache of large payout replies (a 100-statement page is 70 KB), so a hot page
 * is neither fetched from payouts-read over NATS nor compressed again for every request.
 *
 * - Keys: platform (from the ID token, never from the request) + route + normalized query.
 *   A platform can only ever be answered from its own entries.
 * - Freshness: payouts-read announces on `payouts.v1.changed` (core NATS, after commit) the
 *   platforms whose read model changed; every gateway replica drops their entries at once.
 *   A fetch that was in flight across an announcement of its platform does not store its
 *   possibly older bytes (a generation per platform, #libs/cache). PAYOUTS_CACHE_TTL_MS bounds
 *   staleness should an announcement be missed; a NATS disconnect or reconnect (announcements
 *   may have been missed), a subscription error or an unreadable announcement flushes everything.
 * - Size: replies below PAYOUTS_CACHE_MIN_BYTES are not kept (they cost little through NATS
 *   and stay on the live path); the bodies, their compressed forms, the keys and a per-entry
 *   overhead are bounded by PAYOUTS_CACHE_MAX_BYTES, least recently used first out.
 * - Hostile paging: pages past the last one are answered but never kept, so walking page
 *   numbers (at most 10,000 × 100 page sizes × the statuses) cannot fill the cache with empty
 *   pages and push the real ones out.
 * - Concurrent misses of one key share one fetch; failures are never kept.
 */
@Injectable()
export class PayoutsReplyCache extends BroadcastCache<Reply> implements OnModuleInit, BeforeApplicationShutdown {
  constructor(
    nats: NatsClient,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(
      nats.connection,
      {
        maxEntries: MAX_ENTRIES,
        maxBytes: env.PAYOUTS_CACHE_MAX_BYTES,
        sizeOf: (reply) => reply.bytes,
        ttlMs: env.PAYOUTS_CACHE_TTL_MS,
        onLookup: (outcome) => lookups.inc({ outcome }),
      },
      {
        subject: BroadcastSubjects.payoutsChanged,
        scopesOf: (data) => decodePayoutsChanged(data) ?? { flush: 'unreadable_announcement' },
        onFlush: (cause, error) => {
          if (error) logger.warn({ err: error.message }, 'payouts.v1.changed subscription error; payout cache flushed');
          flushes.inc({ cause });
        },
      },
    );
  }

  onModuleInit(): void {
    caches.push(this);
    super.onModuleInit();
  }

  beforeApplicationShutdown(): void {
    super.beforeApplicationShutdown();
    caches = caches.filter((cache) => cache !== this);
  }

  /**
   * The reply for `key` of `agentId`: from the cache, else from `fetch` (which throws for
   * anything but a successful reply; failures are never cached). `list`: the reply is a page of
   * a list, not kept when it is past the last page.
   */
  reply(agentId: string, key: string, fetch: () => Promise<Buffer>, options: { list?: boolean } = {}): Promise<PayoutReply> {
    const load = async () => {
      const body = await fetch();
      const reply = new Reply(body, body.length >= this.env.PAYOUTS_CACHE_MIN_BYTES);
      reply.grew = () => this.cache.remeasure(agentId, key, reply);
      return reply;
    };
    return this.cache.fetch(agentId, key, load, { keep: (reply) => reply.large && !(options.list && isPastLastPage(reply.body)) });
  }

  /** Drops a platform's entries; fetches of it in flight will not be kept. */
  forget(agentId: string): void {
    this.cache.invalidate(agentId);
  }

  /** Drops everything; no fetch in flight will be kept. */
  flush(cause: string): void {
    this.cache.flush();
    flushes.inc({ cause });
  }

  /** What the cache holds (for tests and diagnostics). */
  stats(): { entries: number; bytes: number; platforms: number } {
    const { entries, bytes, scopes } = this.cache.stats();
    return { entries, bytes, platforms: scopes };
  }
}
