import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Report series (DESIGN §7): the registered series scopes (platform, traffic, time range,
 * granularity) and their published snapshots, computed by the publication in the same database
 * snapshot as the report snapshots, so that the buckets sum to the report of the same scope.
 * The buckets are kept as served (a JSON array of {start_at, end_at, five figures}).
 */
export class ReportingSeries1795740000001 implements MigrationInterface {
  name = 'ReportingSeries1795740000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE reporting.series_scope (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        granularity text NOT NULL CHECK (granularity IN ('hour', 'day')),
        registered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, traffic, time_range, granularity)
      )`);
    await queryRunner.query(`
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
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS reporting.series_snapshot`);
    await queryRunner.query(`DROP TABLE IF EXISTS reporting.series_scope`);
  }
}
