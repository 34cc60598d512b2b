import { sqlMigration } from '#libs/database';

/**
 * Key management for platform owners (DESIGN §7): a key's name (null for keys made by the ops
 * CLI), the last four characters of its secret (null for keys made before this migration until
 * their next use), when it was last used (batched by the gateway), and the audit trail of key
 * creations and revocations (who: an owner's ID-token `sub`, or ops).
 */
export const IdentityOwnerKeys1795740000000 = sqlMigration(
  'IdentityOwnerKeys1795740000000',
  [
    `ALTER TABLE identity.api_key ADD COLUMN name text`,
    `ALTER TABLE identity.api_key ADD COLUMN last4 text`,
    `ALTER TABLE identity.api_key ADD COLUMN last_used_at timestamptz`,
    `ALTER TABLE identity.api_key ADD CONSTRAINT api_key_name_check CHECK (name IS NULL OR char_length(name) BETWEEN 1 AND 64)`,
    `ALTER TABLE identity.api_key ADD CONSTRAINT api_key_last4_check CHECK (last4 IS NULL OR last4 ~ '^[0-9A-Za-z]{4}$')`,
    `
      CREATE TABLE identity.api_key_audit (
        audit_id bigserial NOT NULL,
        agent_id text NOT NULL,
        key_id text NOT NULL,
        action text NOT NULL,
        mode text NOT NULL,
        name text,
        actor text NOT NULL,
        actor_sub text,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT api_key_audit_pkey PRIMARY KEY (audit_id),
        CONSTRAINT api_key_audit_action_check CHECK (action IN ('created', 'revoked')),
        CONSTRAINT api_key_audit_actor_check CHECK ((actor = 'owner' AND actor_sub IS NOT NULL) OR (actor = 'ops' AND actor_sub IS NULL))
      )`,
    `CREATE INDEX api_key_audit_agent_id_idx ON identity.api_key_audit (agent_id, audit_id)`,
  ],
  [
    `DROP TABLE IF EXISTS identity.api_key_audit`,
    `ALTER TABLE identity.api_key DROP CONSTRAINT IF EXISTS api_key_last4_check`,
    `ALTER TABLE identity.api_key DROP CONSTRAINT IF EXISTS api_key_name_check`,
    `ALTER TABLE identity.api_key DROP COLUMN IF EXISTS last_used_at`,
    `ALTER TABLE identity.api_key DROP COLUMN IF EXISTS last4`,
    `ALTER TABLE identity.api_key DROP COLUMN IF EXISTS name`,
  ],
);
