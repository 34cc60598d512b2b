import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { BroadcastCache } from '#libs/cache';
import { BroadcastSubjects, decodeReportsPublished, type SeriesRequestDto } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

const lookups = counter('weave_gateway_series_cache_total', 'Series replies the gateway served from its cache (hit), fetched (miss) or joined to a fetch in flight (shared)', ['outcome']);

/**
 * Longest a series reply is served from the gateway's cache: the bound on a missed
 * `reporting.v1.published`, and on how late the reply's `status` turns from ready to stale
 * (decided by reporting-projection when it answered; stale means minutes without a publication).
 */
export const SERIES_CACHE_TTL_MS = 1000;
const MAX_ENTRIES = 20_000;

/**
 * The gateway's cache of series replies (a 90-day daily series is about 15 kB of JSON): a hot
 * series is neither asked of reporting-projection over NATS nor copied through NATS for every
 * request. Keyed by platform (from the credential), traffic, range and granularity; only ready
 * replies are kept, never a 202. Every publication is announced on `reporting.v1.published`:
 * a cycle drops everything, a scope's first preparation drops that platform's series (a fetch in
 * flight across either is not kept), as does a NATS disconnect or
 * reconnect; entries live SERIES_CACHE_TTL_MS at most; SERIES_CACHE_MAX_BYTES bounds the memory
 * (0: no cache).
 */
@Injectable()
export class SeriesReplyCache extends BroadcastCache<Buffer> implements OnModuleInit, BeforeApplicationShutdown {
  constructor(nats: NatsClient, env: GatewayEnv, @Inject(LOGGER) logger: Logger) {
    super(
      nats.connection,
      {
        maxEntries: MAX_ENTRIES,
        maxBytes: env.SERIES_CACHE_MAX_BYTES,
        sizeOf: (body) => body.length,
        ttlMs: SERIES_CACHE_TTL_MS,
        onLookup: (outcome) => lookups.inc({ outcome }),
      },
      {
        subject: BroadcastSubjects.reportsPublished,
        scopesOf: (data) => {
          const scope = decodeReportsPublished(data);
          return scope ? [scope.agent_id] : { flush: 'published' };
        },
        onFlush: (_cause, error) => {
          if (error) logger.warn({ err: error.message }, 'publication broadcast subscription error; relying on the series cache TTL');
        },
      },
    );
  }

  /** The reply for this series: kept, shared with a fetch in flight, or fetched (kept when `keep` says so). */
  fetch(request: SeriesRequestDto, load: () => Promise<Buffer>, keep: (body: Buffer) => boolean): Promise<Buffer> {
    return this.cache.fetch(request.agent_id, `${request.traffic}\u0000${request.time_range}\u0000${request.granularity}`, load, { keep });
  }
}
