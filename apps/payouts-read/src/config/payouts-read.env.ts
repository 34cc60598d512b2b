import { IsInt, Max, Min } from 'class-validator';
import { ServiceEnv } from '#libs/config';

/** Configuration of payouts-read, validated once at start (DESIGN §2). */
export class PayoutsReadEnv extends ServiceEnv {
  /** HTTP listener for health and metrics only. */
  @IsInt() @Min(0) @Max(65535)
  PAYOUTS_HTTP_PORT = 3102;

  /** Payout events fetched and applied per transaction. */
  @IsInt() @Min(1) @Max(10000)
  PAYOUTS_INGEST_BATCH_SIZE = 500;

  /** Deliveries after which an event whose handling keeps failing is dead-lettered. */
  @IsInt() @Min(1) @Max(100)
  PAYOUTS_INGEST_MAX_DELIVERIES = 5;

  /** How long a cached reply may be served if a change announcement is missed (0: no cache). */
  @IsInt() @Min(0) @Max(60000)
  PAYOUTS_CACHE_TTL_MS = 5000;

  /** Bytes of serialized replies (with their keys and per-entry overhead) this replica caches, least recently used out first. */
  @IsInt() @Min(0) @Max(4 * 1024 * 1024 * 1024)
  PAYOUTS_CACHE_MAX_BYTES = 64 * 1024 * 1024;
}
