import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { IdentityRepository, lastFour, type KeyUse } from '#libs/identity';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

const flushes = counter('weave_key_usage_flushes_total', 'Batches of API-key uses written by the gateway (last_used_at)', ['outcome']);

/** Uses kept when the database refuses a batch: beyond this the oldest keys' uses are dropped. */
const MAX_PENDING = 100_000;

/**
 * `last_used_at` of API keys without a database write per request (DESIGN §7: within a minute
 * of the latest successful use). ApiKeyGuard records each successful use in memory (the latest
 * per key); every KEY_USAGE_FLUSH_INTERVAL_MS, and once more at shutdown after the HTTP server
 * has finished its requests, the batch is written with one UPDATE (IdentityRepository
 * .recordKeyUsage: `last_used_at` only moves forward, so replicas may flush in any order). A
 * failed write keeps the uses for the next flush. The key list of this replica also shows uses
 * not written yet (pendingUse).
 *
 * The secret passes through only to take its last four characters, which fill `last4` of keys
 * made before the column existed; it is not kept.
 */
@Injectable()
export class KeyUsageService implements OnApplicationBootstrap, OnApplicationShutdown {
  private pending = new Map<string, KeyUse>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly identity: IdentityRepository,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.env.KEY_USAGE_FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Runs after the HTTP server closed (every request answered) and before the pool closes (InfrastructureShutdown runs last). */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** A successful authentication with this key, now. */
  record(keyId: string, secret: string): void {
    if (this.pending.size >= MAX_PENDING && !this.pending.has(keyId)) return;
    this.pending.set(keyId, { key_id: keyId, used_at: new Date(), last4: lastFour(secret) });
  }

  /** The latest use of a key this replica saw and has not written yet. */
  pendingUse(keyId: string): Date | undefined {
    return this.pending.get(keyId)?.used_at;
  }

  /** Writes the uses seen since the last flush (one statement); concurrent calls share one write. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.identity.recordKeyUsage([...batch.values()]);
      flushes.inc({ outcome: 'written' });
    } catch (error) {
      flushes.inc({ outcome: 'failed' });
      this.logger.warn({ err: (error as Error).message, keys: batch.size }, 'API-key uses could not be written; kept for the next flush');
      // Newer uses recorded meanwhile win over the failed batch's.
      for (const [keyId, use] of batch) if (!this.pending.has(keyId) && this.pending.size < MAX_PENDING) this.pending.set(keyId, use);
    }
  }
}
