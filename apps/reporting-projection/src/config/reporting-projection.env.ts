import { IsInt, Max, Min } from 'class-validator';
import { ServiceEnv } from '#libs/config';

/** Configuration of reporting-projection, validated once at start (DESIGN §2). */
export class ReportingProjectionEnv extends ServiceEnv {
  /** HTTP listener for health and metrics only. */
  @IsInt() @Min(0) @Max(65535)
  REPORTING_HTTP_PORT = 3101;

  @IsInt() @Min(100)
  REPORTING_PUBLISH_INTERVAL_MS = 60000;

  @IsInt() @Min(1000)
  REPORTING_STALE_AFTER_MS = 120000;

  /** Messages fetched and applied per PostgreSQL transaction. */
  @IsInt() @Min(1) @Max(10000)
  INGEST_BATCH_SIZE = 2000;

  /** Transactions a batch is split into and applied at once (by platform; a recommendation's events stay together and in order). */
  @IsInt() @Min(1) @Max(16)
  INGEST_CONCURRENCY = 2;

  /** Deliveries after which an event whose handling keeps failing is dead-lettered. */
  @IsInt() @Min(1) @Max(100)
  INGEST_MAX_DELIVERIES = 5;

  /**
   * Days after its creation (before the service's now) that a recommendation's events and
   * entries still change totals (DESIGN §10); older ones are dead-lettered, and the weekly
   * partitions of per-recommendation state and accounting entries that end before it are dropped.
   */
  @IsInt() @Min(35) @Max(3650)
  REPORTING_RESTATEMENT_DAYS = 120;

  /**
   * Days minute rollups are kept (DESIGN §10); older weeks are summed into quarter-hour rollups,
   * which answer every Report and series exactly. At least 31, so that the edges of the today, 1d,
   * 7d and 30d ranges stay on minute rows. The start of the 90d range is then answered from the
   * per-recommendation state, which needs REPORTING_RESTATEMENT_DAYS ≥ 91; with a shorter
   * restatement window, minute rollups are kept 91 days whatever this says.
   */
  @IsInt() @Min(31) @Max(3650)
  REPORTING_MINUTE_ROLLUPS_DAYS = 35;

  /** Snapshots kept in memory per replica to answer report requests without a query. */
  @IsInt() @Min(0)
  REPORT_CACHE_ENTRIES = 100000;
}
