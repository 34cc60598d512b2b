import { sqlMigration } from '#libs/database';

/**
 * Report series (DESIGN §7): the registered series scopes (platform, traffic, time range,
 * granularity) and their published snapshots, computed by the publication in the same database
 * snapshot as the report snapshots, so that the buckets sum to the report of the same scope.
 * The buckets are kept as served (a JSON array of {start_at, end_at, five figures}).
 */
export const ReportingSeries1795740000001 = sqlMigration(
  'ReportingSeries1795740000001',
  [
    `
      CREATE TABLE reporting.series_scope (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        granularity text NOT NULL CHECK (granularity IN ('hour', 'day')),
        registered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, traffic, time_range, granularity)
      )`,
    `
      CREATE TABLE reporting.series_snapshot (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        granularity text NOT NULL,
        start_at timestamptz,
        end_at timestamptz NOT NULL,
        processed_through timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        timezone text NOT NULL,
        buckets jsonb NOT NULL,
        PRIMARY KEY (agent_id, traffic, time_range, granularity)
      )`,
  ],
  [
    `DROP TABLE IF EXISTS reporting.series_snapshot`,
    `DROP TABLE IF EXISTS reporting.series_scope`,
  ],
);
