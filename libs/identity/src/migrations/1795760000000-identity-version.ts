import { sqlMigration } from '#libs/database';

/** Changes of these columns alter what a gateway caches about a key (ActiveKey) or a platform (status, owner lists). */
const KEY_COLUMNS = ['key_id', 'agent_id', 'mode', 'secret_hash', 'revoked_at'];
const PLATFORM_COLUMNS = ['agent_id', 'status', 'owner_uid'];

const changed = (columns: string[]) => columns.map((column) => `OLD.${column} IS DISTINCT FROM NEW.${column}`).join(' OR ');

/**
 * The identity version: one counter that every change of what the gateway caches about keys and
 * platforms moves, in the changing transaction (triggers). Each gateway replica reads it every
 * IDENTITY_VERSION_POLL_MS and drops its identity cache when it moved, so a revocation or a
 * suspension is seen within the poll interval even when the `identity.v1.changed` broadcast is
 * missed, whatever the cache's TTL. A key's `last_used_at`, `last4` or `name` (written in
 * batches by KeyUsageService, or not cached) do not move it, nor does a platform's `updated_at`
 * alone.
 */
export const IdentityVersion1795760000000 = sqlMigration(
  'IdentityVersion1795760000000',
  [
    `
      CREATE TABLE identity.identity_version (
        id smallint NOT NULL,
        version bigint NOT NULL,
        CONSTRAINT identity_version_pkey PRIMARY KEY (id),
        CONSTRAINT identity_version_id_check CHECK (id = 1)
      )`,
    `INSERT INTO identity.identity_version (id, version) VALUES (1, 0)`,
    `
      CREATE FUNCTION identity.bump_identity_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE identity.identity_version SET version = version + 1 WHERE id = 1;
        RETURN NULL;
      END
      $$`,
    `CREATE TRIGGER api_key_identity_version_write AFTER INSERT OR DELETE ON identity.api_key FOR EACH ROW EXECUTE FUNCTION identity.bump_identity_version()`,
    `CREATE TRIGGER api_key_identity_version_update AFTER UPDATE ON identity.api_key FOR EACH ROW WHEN (${changed(KEY_COLUMNS)}) EXECUTE FUNCTION identity.bump_identity_version()`,
    `CREATE TRIGGER api_key_identity_version_truncate AFTER TRUNCATE ON identity.api_key FOR EACH STATEMENT EXECUTE FUNCTION identity.bump_identity_version()`,
    `CREATE TRIGGER platform_identity_version_write AFTER INSERT OR DELETE ON identity.platform FOR EACH ROW EXECUTE FUNCTION identity.bump_identity_version()`,
    `CREATE TRIGGER platform_identity_version_update AFTER UPDATE ON identity.platform FOR EACH ROW WHEN (${changed(PLATFORM_COLUMNS)}) EXECUTE FUNCTION identity.bump_identity_version()`,
    `CREATE TRIGGER platform_identity_version_truncate AFTER TRUNCATE ON identity.platform FOR EACH STATEMENT EXECUTE FUNCTION identity.bump_identity_version()`,
  ],
  [
    `DROP TRIGGER IF EXISTS platform_identity_version_truncate ON identity.platform`,
    `DROP TRIGGER IF EXISTS platform_identity_version_update ON identity.platform`,
    `DROP TRIGGER IF EXISTS platform_identity_version_write ON identity.platform`,
    `DROP TRIGGER IF EXISTS api_key_identity_version_truncate ON identity.api_key`,
    `DROP TRIGGER IF EXISTS api_key_identity_version_update ON identity.api_key`,
    `DROP TRIGGER IF EXISTS api_key_identity_version_write ON identity.api_key`,
    `DROP FUNCTION IF EXISTS identity.bump_identity_version()`,
    `DROP TABLE IF EXISTS identity.identity_version`,
  ],
);
