import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets the gateway generates for itself when none is configured (today the tracking-link
 * signing secret in development): one row per name, written once by whichever replica starts
 * first (INSERT … ON CONFLICT DO NOTHING), read by all of them.
 */
export class IdentityGeneratedSecret1795686268941 implements MigrationInterface {
  name = 'IdentityGeneratedSecret1795686268941';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE identity.generated_secret (
        name text PRIMARY KEY,
        secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS identity.generated_secret`);
  }
}
