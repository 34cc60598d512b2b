import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Transactional outbox of `settings.timezone.changed`: a change and its event commit together,
 * and the event is published (and the row deleted) after the commit. A crash between the two
 * leaves the row, which the relay publishes at the next start or sweep: no change is lost.
 */
export class TimezoneSettingsOutbox1764288000000 implements MigrationInterface {
  name = 'TimezoneSettingsOutbox1764288000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE timezone_settings.outbox (
        event_id text PRIMARY KEY,
        subject text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS timezone_settings.outbox');
  }
}
