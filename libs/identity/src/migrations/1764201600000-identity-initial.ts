import { sqlMigration } from '#libs/database';

/** Platforms and their API keys (schema `identity`, owned by the gateway). */
export const IdentityInitial1764201600000 = sqlMigration(
  'IdentityInitial1764201600000',
  [
    `
      CREATE TABLE identity.platform (
        agent_id text PRIMARY KEY,
        owner_uid text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
    `CREATE INDEX platform_owner_uid_idx ON identity.platform (owner_uid) WHERE owner_uid IS NOT NULL`,
    `
      CREATE TABLE identity.api_key (
        key_id text PRIMARY KEY,
        agent_id text NOT NULL REFERENCES identity.platform (agent_id),
        mode text NOT NULL CHECK (mode IN ('live', 'test')),
        -- SHA-256 of the whole secret; the secret itself is never stored
        secret_hash bytea NOT NULL UNIQUE CHECK (octet_length(secret_hash) = 32),
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`,
    `CREATE INDEX api_key_agent_id_idx ON identity.api_key (agent_id)`,
  ],
  [
    `DROP TABLE IF EXISTS identity.api_key`,
    `DROP TABLE IF EXISTS identity.platform`,
  ],
);
