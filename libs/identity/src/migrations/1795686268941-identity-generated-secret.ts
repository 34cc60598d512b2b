import { sqlMigration } from '#libs/database';

/**
 * Secrets the gateway generates for itself when none is configured (today the tracking-link
 * signing secret in development): one row per name, written once by whichever replica starts
 * first (INSERT … ON CONFLICT DO NOTHING), read by all of them.
 */
export const IdentityGeneratedSecret1795686268941 = sqlMigration(
  'IdentityGeneratedSecret1795686268941',
  [
    `
      CREATE TABLE identity.generated_secret (
        name text PRIMARY KEY,
        secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
  ],
  [
    `DROP TABLE IF EXISTS identity.generated_secret`,
  ],
);
