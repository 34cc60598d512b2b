import { sqlMigration } from '#libs/database';

/**
 * Quarter-hour rollups (DESIGN §10): minute rollups older than REPORTING_MINUTE_ROLLUPS_DAYS are
 * summed into `rollup_quarter` (same columns, bucket = the quarter-hour's start, partitioned by
 * week like rollup_minute) and their weekly partition dropped, by the projection itself
 * (StoragePartitions.coarsen). `rollup_minute_window` holds the one bound between the two: minute
 * rows are kept for buckets at or after `minute_from`, quarter rows only exist before it, so the
 * two never overlap. It starts at -infinity (nothing coarsened): an existing store is coarsened by
 * the service's first maintenance run, not by this migration.
 *
 * The BRIN indexes answer the part of a period edge that is not on a quarter-hour (the start of
 * the rolling 90d window) from the per-recommendation state and entries: a few minutes of one
 * weekly partition, which is written in creation order.
 */
export const ReportingQuarterRollups1795910000000 = sqlMigration(
  'ReportingQuarterRollups1795910000000',
  [
    `
      CREATE TABLE reporting.rollup_quarter (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        bucket timestamptz NOT NULL,
        exposures bigint NOT NULL DEFAULT 0,
        clicks bigint NOT NULL DEFAULT 0,
        engagements bigint NOT NULL DEFAULT 0,
        conversions bigint NOT NULL DEFAULT 0,
        earnings_micros bigint NOT NULL DEFAULT 0,
        earnings_excluded_recommendations bigint NOT NULL DEFAULT 0,
        pending_earnings_recommendations bigint NOT NULL DEFAULT 0,
        accounting_review_required bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, traffic, bucket)
      ) PARTITION BY RANGE (bucket)`,
    `CREATE TABLE reporting.rollup_minute_window (id smallint PRIMARY KEY CHECK (id = 1), minute_from timestamptz NOT NULL)`,
    `INSERT INTO reporting.rollup_minute_window VALUES (1, '-infinity')`,
    `CREATE INDEX recommendation_created_brin ON reporting.recommendation USING brin (created_at)`,
    `CREATE INDEX accounting_entry_recorded_brin ON reporting.accounting_entry USING brin (recorded_at)`,
  ],
  [
    // Back to minutes only: what was coarsened is put back as one minute row per quarter (its first minute).
    `SELECT reporting.ensure_partitions(array_agg(DISTINCT bucket)) FROM reporting.rollup_quarter`,
    `INSERT INTO reporting.rollup_minute SELECT * FROM reporting.rollup_quarter ON CONFLICT DO NOTHING`,
    `DROP TABLE reporting.rollup_quarter`,
    `DROP TABLE reporting.rollup_minute_window`,
    `DROP INDEX reporting.recommendation_created_brin`,
    `DROP INDEX reporting.accounting_entry_recorded_brin`,
  ],
);
