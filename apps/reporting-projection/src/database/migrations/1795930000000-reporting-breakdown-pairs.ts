import { sqlMigration } from '#libs/database';

const FIGURES = 'exposures, clicks, engagements, conversions, earnings_micros';

/** reporting.ensure_breakdown_partitions making the weekly partitions of `table` (its body, as the breakdowns' migration wrote it for breakdown_rollup). */
const ensurePartitions = (table: 'breakdown_rollup' | 'breakdown_pair') => `
  CREATE OR REPLACE FUNCTION reporting.ensure_breakdown_partitions(weeks timestamptz[]) RETURNS integer
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
      name := '${table}_w' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
      IF to_regclass('reporting.' || name) IS NULL THEN
        EXECUTE format('CREATE TABLE reporting.%I PARTITION OF reporting.${table} FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 80)',
                       name, week, week + interval '7 days');
        made := made + 1;
      END IF;
    END LOOP;
    RETURN made;
  END $$`;

/** The Mondays of the weekly partitions of `table` (named `<table>_wYYYYMMDD`). */
const weeksOf = (table: string) => `
  SELECT to_timestamp(substr(c.relname, length('${table}_w') + 1), 'YYYYMMDD')::timestamp AT TIME ZONE 'UTC' AS w
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = 'reporting.${table}'::regclass AND c.relname LIKE '${table}\\_w%'`;

/**
 * One breakdown row per changed recommendation (docs/decisions/breakdowns-by-ad-and-product.md):
 * - `breakdown_pair`: the five figures per (platform, traffic, hour of creation, ad, product),
 *   '' standing for "unattributed" in either; the ad breakdown sums its rows per ad, the product
 *   breakdown the same rows per product. Partitioned by week of bucket; its weeks are made by
 *   `reporting.ensure_breakdown_partitions` (which now makes those of breakdown_pair), from the
 *   weeks breakdown_rollup already has and the current one here, then by the projection as before.
 * - `breakdown_rollup` is kept, read-only: its rows (per dimension and id) cannot be split into
 *   pairs, and they are exact as they stand. A recommendation counted in them that changes later
 *   takes its previous contribution out of the pair row of its previous ids (which may go below
 *   zero) and puts its new one into that of its new ids; the breakdown of a dimension is the sum
 *   of both tables per id, so it stays exact across the cut.
 * Down: the pair rows are folded back into breakdown_rollup, per dimension and id, and the
 * function makes breakdown_rollup's weeks again.
 */
export const ReportingBreakdownPairs1795930000000 = sqlMigration(
  'ReportingBreakdownPairs1795930000000',
  [
    `
      CREATE TABLE reporting.breakdown_pair (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        bucket timestamptz NOT NULL,
        ad_id text NOT NULL,
        product_id text NOT NULL,
        exposures bigint NOT NULL DEFAULT 0,
        clicks bigint NOT NULL DEFAULT 0,
        engagements bigint NOT NULL DEFAULT 0,
        conversions bigint NOT NULL DEFAULT 0,
        earnings_micros bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, traffic, bucket, ad_id, product_id)
      ) PARTITION BY RANGE (bucket)`,
    ensurePartitions('breakdown_pair'),
    `SELECT reporting.ensure_breakdown_partitions(array_agg(w)) FROM (${weeksOf('breakdown_rollup')} UNION SELECT now()) weeks`,
  ],
  [
    ensurePartitions('breakdown_rollup'),
    `SELECT reporting.ensure_breakdown_partitions(array_agg(w)) FROM (${weeksOf('breakdown_pair')}) weeks`,
    ...(['ad', 'product'] as const).map(
      (dimension) => `
        INSERT INTO reporting.breakdown_rollup AS t (agent_id, traffic, dimension, bucket, id, ${FIGURES})
        SELECT agent_id, traffic, '${dimension}', bucket, ${dimension}_id, sum(exposures), sum(clicks), sum(engagements), sum(conversions), sum(earnings_micros)
          FROM reporting.breakdown_pair
         GROUP BY agent_id, traffic, bucket, ${dimension}_id
        ON CONFLICT (agent_id, traffic, dimension, bucket, id) DO UPDATE SET
          ${FIGURES.split(', ')
            .map((c) => `${c} = t.${c} + excluded.${c}`)
            .join(', ')}`,
    ),
    `DROP TABLE IF EXISTS reporting.breakdown_pair`,
  ],
);
