import { sqlMigration } from '#libs/database';

/** The tables partitioned by week of creation time, and the column each is partitioned on. */
export const PARTITIONED_TABLES = [
  { table: 'recommendation', column: 'created_at', fillfactor: 80 },
  { table: 'accounting_entry', column: 'recorded_at', fillfactor: 100 },
  { table: 'rollup_minute', column: 'bucket', fillfactor: 80 },
] as const;

const COUNTERS = `exposures, clicks, engagements, conversions, earnings_micros, earnings_excluded_recommendations,
  pending_earnings_recommendations, accounting_review_required`;

/**
 * The bounded-storage layout: per-recommendation state, accounting entries and minute rollups
 * become tables partitioned by week (Monday 00:00 UTC) of creation time, so that what leaves the
 * window is dropped a partition at a time. Partitions are made by `reporting.ensure_partitions`
 * (plain SQL, no extension), which the projection calls ahead of time and before it writes a week
 * it has not seen; this migration calls it for every week that holds rows and copies them over.
 *
 * Known recommendations only: the rows that the previous layout created for a recommendation that
 * was only named by an accounting entry (no identity, nothing counted) are not carried over; an
 * unattributed entry waits in accounting_entry, and writers meet on `recommendation_lock` instead
 * (an unlogged table whose rows live only inside a writing transaction).
 */
export const ReportingPartitioned1795800000000 = sqlMigration(
  'ReportingPartitioned1795800000000',
  [
    `
      CREATE FUNCTION reporting.ensure_partitions(weeks timestamptz[]) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        week timestamptz;
        spec record;
        name text;
        made integer := 0;
      BEGIN
        -- Replicas may ask for the same week at once: one makes it, the others find it.
        PERFORM pg_advisory_xact_lock(hashtext('reporting.ensure_partitions'));
        FOR week IN
          SELECT DISTINCT date_trunc('week', w AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM unnest(weeks) AS w WHERE w IS NOT NULL
        LOOP
          FOR spec IN SELECT * FROM (VALUES ${PARTITIONED_TABLES.map((t) => `('${t.table}', ${t.fillfactor})`).join(', ')}) AS s(parent, fillfactor)
          LOOP
            name := spec.parent || '_w' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
            IF to_regclass('reporting.' || name) IS NULL THEN
              EXECUTE format('CREATE TABLE reporting.%I PARTITION OF reporting.%I FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = %s)',
                             name, spec.parent, week, week + interval '7 days', spec.fillfactor);
              made := made + 1;
            END IF;
          END LOOP;
        END LOOP;
        RETURN made;
      END $$`,
    ...PARTITIONED_TABLES.flatMap(({ table }) => [
      `ALTER TABLE reporting.${table} RENAME TO ${table}_unpartitioned`,
      `ALTER TABLE reporting.${table}_unpartitioned RENAME CONSTRAINT ${table}_pkey TO ${table}_unpartitioned_pkey`,
    ]),
    `ALTER INDEX reporting.accounting_entry_unattributed_idx RENAME TO accounting_entry_unpartitioned_unattributed_idx`,
    `
      CREATE TABLE reporting.recommendation (
        recommendation_id text NOT NULL,
        agent_id text NOT NULL,
        traffic text NOT NULL,
        created_at timestamptz NOT NULL,
        level smallint NOT NULL DEFAULT -1,
        billable boolean NOT NULL DEFAULT false,
        attributed_entries integer NOT NULL DEFAULT 0,
        attributed_usd_micros bigint NOT NULL DEFAULT 0,
        foreign_currency_entries integer NOT NULL DEFAULT 0,
        PRIMARY KEY (recommendation_id, created_at)
      ) PARTITION BY RANGE (created_at)`,
    `CREATE UNLOGGED TABLE reporting.recommendation_lock (recommendation_id text PRIMARY KEY)`,
    `
      CREATE TABLE reporting.accounting_entry (
        entry_id text NOT NULL,
        agent_id text NOT NULL,
        traffic text NOT NULL,
        recommendation_id text,
        amount_micros bigint NOT NULL,
        currency text,
        recorded_at timestamptz NOT NULL,
        attributed boolean NOT NULL,
        PRIMARY KEY (entry_id, recorded_at)
      ) PARTITION BY RANGE (recorded_at)`,
    `CREATE INDEX accounting_entry_unattributed_idx ON reporting.accounting_entry (recommendation_id) WHERE NOT attributed`,
    `
      CREATE TABLE reporting.rollup_minute (
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
    `
      SELECT reporting.ensure_partitions(array_agg(w)) FROM (
        SELECT created_at AS w FROM reporting.recommendation_unpartitioned WHERE created_at IS NOT NULL
        UNION SELECT recorded_at FROM reporting.accounting_entry_unpartitioned
        UNION SELECT bucket FROM reporting.rollup_minute_unpartitioned
        UNION SELECT now()) weeks`,
    `
      INSERT INTO reporting.recommendation
      SELECT recommendation_id, agent_id, traffic, created_at, level, billable, attributed_entries, attributed_usd_micros,
             foreign_currency_entries
        FROM reporting.recommendation_unpartitioned WHERE agent_id IS NOT NULL`,
    `INSERT INTO reporting.accounting_entry SELECT * FROM reporting.accounting_entry_unpartitioned`,
    `INSERT INTO reporting.rollup_minute (agent_id, traffic, bucket, ${COUNTERS})
     SELECT agent_id, traffic, bucket, ${COUNTERS} FROM reporting.rollup_minute_unpartitioned`,
    ...PARTITIONED_TABLES.map(({ table }) => `DROP TABLE reporting.${table}_unpartitioned`),
  ],
  [
    ...PARTITIONED_TABLES.flatMap(({ table }) => [
      `ALTER TABLE reporting.${table} RENAME TO ${table}_partitioned`,
      `ALTER TABLE reporting.${table}_partitioned RENAME CONSTRAINT ${table}_pkey TO ${table}_partitioned_pkey`,
    ]),
    `ALTER INDEX reporting.accounting_entry_unattributed_idx RENAME TO accounting_entry_partitioned_unattributed_idx`,
    `
      CREATE TABLE reporting.recommendation (
        recommendation_id text PRIMARY KEY,
        agent_id text,
        traffic text,
        created_at timestamptz,
        level smallint NOT NULL DEFAULT -1,
        billable boolean NOT NULL DEFAULT false,
        attributed_entries integer NOT NULL DEFAULT 0,
        attributed_usd_micros bigint NOT NULL DEFAULT 0,
        foreign_currency_entries integer NOT NULL DEFAULT 0
      ) WITH (fillfactor = 80)`,
    `
      CREATE TABLE reporting.accounting_entry (
        entry_id text PRIMARY KEY,
        agent_id text NOT NULL,
        traffic text NOT NULL,
        recommendation_id text,
        amount_micros bigint NOT NULL,
        currency text,
        recorded_at timestamptz NOT NULL,
        attributed boolean NOT NULL
      )`,
    `CREATE INDEX accounting_entry_unattributed_idx ON reporting.accounting_entry (recommendation_id) WHERE NOT attributed`,
    `
      CREATE TABLE reporting.rollup_minute (LIKE reporting.rollup_minute_partitioned INCLUDING DEFAULTS, PRIMARY KEY (agent_id, traffic, bucket))
      WITH (fillfactor = 80)`,
    `INSERT INTO reporting.recommendation SELECT * FROM reporting.recommendation_partitioned`,
    `INSERT INTO reporting.accounting_entry SELECT * FROM reporting.accounting_entry_partitioned`,
    `INSERT INTO reporting.rollup_minute SELECT * FROM reporting.rollup_minute_partitioned`,
    `DROP TABLE reporting.recommendation_partitioned, reporting.accounting_entry_partitioned, reporting.rollup_minute_partitioned`,
    `DROP TABLE reporting.recommendation_lock`,
    `DROP FUNCTION reporting.ensure_partitions(timestamptz[])`,
  ],
);
