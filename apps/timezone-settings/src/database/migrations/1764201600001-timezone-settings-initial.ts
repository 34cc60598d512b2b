import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reporting timezone of each platform (SPEC "Reporting timezone setting"). A platform
 * without a row reports in UTC.
 */
export class TimezoneSettingsInitial1764201600001 implements MigrationInterface {
  name = 'TimezoneSettingsInitial1764201600001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE timezone_settings.platform_timezone (
        agent_id text PRIMARY KEY,
        reporting_timezone text NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS timezone_settings.platform_timezone');
  }
}
