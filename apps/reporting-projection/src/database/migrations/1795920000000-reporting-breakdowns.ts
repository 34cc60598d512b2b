import { sqlMigration } from '#libs/database';

const FIGURES = 'exposures, clicks, engagements, conversions, earnings_micros';

/**
 * Breakdowns by ad and product (DESIGN §9, docs/decisions/breakdowns-by-ad-and-product.md):
 * - `recommendation.ad_id` / `product_id`: the ids of its `generated` event (null until one
 *   carrying them arrives);
 * - `breakdown_rollup`: the five figures per (platform, traffic, dimension, id, hour of creation),
 *   '' standing for "unattributed", partitioned by week of bucket like rollup_minute; its weeks
 *   are made by `reporting.ensure_breakdown_partitions`, which the projection calls beside
 *   `reporting.ensure_partitions`;
 * (the parts of a period that do not fill an hour are read from the per-recommendation state,
 * through the BRIN index on `recommendation.created_at` that the quarter-hour rollups' migration
 * made);
 * - the registered breakdown scopes and their published snapshots.
 * Recommendations counted before this migration carry no ad or product: their figures are
 * carried over from rollup_hour as unattributed, so every breakdown sums to its Report.
 */
export const ReportingBreakdowns1795920000000 = sqlMigration(
  'ReportingBreakdowns1795920000000',
  [
    `ALTER TABLE reporting.recommendation ADD COLUMN ad_id text, ADD COLUMN product_id text`,
    `
      CREATE TABLE reporting.breakdown_rollup (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        dimension text NOT NULL CHECK (dimension IN ('ad', 'product')),
        bucket timestamptz NOT NULL,
        id text NOT NULL,
        exposures bigint NOT NULL DEFAULT 0,
        clicks bigint NOT NULL DEFAULT 0,
        engagements bigint NOT NULL DEFAULT 0,
        conversions bigint NOT NULL DEFAULT 0,
        earnings_micros bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, traffic, dimension, bucket, id)
      ) PARTITION BY RANGE (bucket)`,
    `
      CREATE FUNCTION reporting.ensure_breakdown_partitions(weeks timestamptz[]) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        week timestamptz;
        name text;
        made integer := 0;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('reporting.ensure_breakdown_partitions'));
        FOR week IN
          SELECT DISTINCT date_trunc('week', w AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM unnest(weeks) AS w WHERE w IS NOT NULL
        LOOP
          name := 'breakdown_rollup_w' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
          IF to_regclass('reporting.' || name) IS NULL THEN
            EXECUTE format('CREATE TABLE reporting.%I PARTITION OF reporting.breakdown_rollup FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 80)',
                           name, week, week + interval '7 days');
            made := made + 1;
          END IF;
        END LOOP;
        RETURN made;
      END $$`,
    `SELECT reporting.ensure_breakdown_partitions(array_agg(w)) FROM (SELECT DISTINCT bucket AS w FROM reporting.rollup_hour UNION SELECT now()) weeks`,
    `
      INSERT INTO reporting.breakdown_rollup (agent_id, traffic, dimension, bucket, id, ${FIGURES})
      SELECT r.agent_id, r.traffic, d.dimension, r.bucket, '', ${FIGURES}
        FROM reporting.rollup_hour r CROSS JOIN (VALUES ('ad'), ('product')) AS d(dimension)
       WHERE exposures <> 0 OR clicks <> 0 OR engagements <> 0 OR conversions <> 0 OR earnings_micros <> 0`,
    `
      CREATE TABLE reporting.breakdown_scope (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        dimension text NOT NULL CHECK (dimension IN ('ad', 'product')),
        registered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, traffic, time_range, dimension)
      )`,
    `
      CREATE TABLE reporting.breakdown_snapshot (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        dimension text NOT NULL,
        start_at timestamptz,
        end_at timestamptz NOT NULL,
        processed_through timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        timezone text NOT NULL,
        totals jsonb NOT NULL,
        tops jsonb NOT NULL,
        PRIMARY KEY (agent_id, traffic, time_range, dimension)
      )`,
  ],
  [
    `DROP TABLE IF EXISTS reporting.breakdown_snapshot`,
    `DROP TABLE IF EXISTS reporting.breakdown_scope`,
    `DROP TABLE IF EXISTS reporting.breakdown_rollup`,
    `DROP FUNCTION IF EXISTS reporting.ensure_breakdown_partitions(timestamptz[])`,
    `ALTER TABLE reporting.recommendation DROP COLUMN IF EXISTS ad_id, DROP COLUMN IF EXISTS product_id`,
  ],
);
