import pg from 'pg';
import {
  KEY_MODES,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  invalidMode,
  isValidKeyId,
  keyNotFound,
  lastFour,
  ownerConflict,
  platformNotFound,
  requireAgentId,
  requireOwnerUid,
  type KeyMode,
} from '#libs/identity-core';
import type { KeyAuditEntry, PlatformStatus } from '#libs/identity';
import type { IdentityWrites } from './commands.js';
import { openMigratedPool, transaction } from './schema-pool.js';

/**
 * The identity schema's migrations, by the names TypeORM records in `identity.migrations`: the
 * list of createIdentityDataSource (test/unit/ops-identity-store.spec.ts holds the two equal).
 */
export const IDENTITY_MIGRATIONS = [
  'IdentityInitial1764201600000',
  'IdentityGeneratedSecret1795686268941',
  'IdentityOwnerKeys1795740000000',
  'IdentityOutbox1795750000000',
  'IdentityVersion1795760000000',
] as const;

const UNIQUE_VIOLATION = '23505';

/**
 * The platform and key writes of the ops CLI on one plain `pg` connection, in SQL: the same
 * statements, transactions and row locks as IdentityRepository (libs/identity), whose errors
 * (IdentityError, from #libs/identity-core) and results it shares, without loading TypeORM at
 * every command. The identity version moves by the schema's triggers, as for any writer. Only
 * when the database or a migration is missing does `open` load TypeORM, to create and migrate
 * the schema exactly as the gateway would (schema-pool.ts).
 */
export class IdentityStore implements IdentityWrites {
  private constructor(private readonly pool: pg.Pool) {}

  static async open(url: string): Promise<IdentityStore> {
    const pool = await openMigratedPool(url, {
      name: 'identity',
      migrations: IDENTITY_MIGRATIONS,
      dataSource: async () => (await import('#libs/identity')).createIdentityDataSource(url, 2, 'ops'),
    });
    return new IdentityStore(pool);
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return transaction(this.pool, work);
  }

  /** Idempotent; see IdentityRepository.createPlatform. */
  async createPlatform(agentId: string, ownerUid?: string): Promise<{ agent_id: string; owner_uid: string | null; status: PlatformStatus; created: boolean }> {
    requireAgentId(agentId);
    requireOwnerUid(ownerUid);
    return this.transaction(async (client) => {
      // ON CONFLICT DO NOTHING: two creations of one platform at once both succeed.
      const inserted = await client.query(
        'INSERT INTO identity.platform (agent_id, owner_uid) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING agent_id',
        [agentId, ownerUid ?? null],
      );
      const { rows } = await client.query<{ agent_id: string; owner_uid: string | null; status: PlatformStatus }>(
        'SELECT agent_id, owner_uid, status FROM identity.platform WHERE agent_id = $1 FOR UPDATE',
        [agentId],
      );
      if (rows.length === 0) throw platformNotFound(agentId);
      const platform = rows[0];
      const created = (inserted.rowCount ?? 0) > 0;
      if (!created && ownerUid) {
        if (platform.owner_uid === null) {
          await client.query('UPDATE identity.platform SET owner_uid = $2, updated_at = now() WHERE agent_id = $1', [agentId, ownerUid]);
          platform.owner_uid = ownerUid;
        } else if (platform.owner_uid !== ownerUid) {
          throw ownerConflict(agentId);
        }
      }
      return { agent_id: platform.agent_id, owner_uid: platform.owner_uid, status: platform.status, created };
    });
  }

  /** Suspends or reactivates a platform; setting the status it already has is a no-op. */
  async setStatus(agentId: string, status: PlatformStatus): Promise<{ agent_id: string; owner_uid: string | null; status: PlatformStatus }> {
    requireAgentId(agentId);
    return this.transaction(async (client) => {
      const { rows } = await client.query<{ agent_id: string; owner_uid: string | null; status: PlatformStatus }>(
        'SELECT agent_id, owner_uid, status FROM identity.platform WHERE agent_id = $1 FOR UPDATE',
        [agentId],
      );
      if (rows.length === 0) throw platformNotFound(agentId);
      const platform = rows[0];
      if (platform.status !== status) {
        await client.query('UPDATE identity.platform SET status = $2, updated_at = now() WHERE agent_id = $1', [agentId, status]);
        platform.status = status;
      }
      return { agent_id: platform.agent_id, owner_uid: platform.owner_uid, status: platform.status };
    });
  }

  /** A key of the ops CLI (no name) and its audit entry, in one transaction with the platform's row locked. */
  async createKey(agentId: string, mode: KeyMode): Promise<{ key_id: string; api_key: string; mode: KeyMode; name: null; created_at: Date }> {
    requireAgentId(agentId);
    if (!KEY_MODES.includes(mode)) throw invalidMode();
    for (let attempt = 0; ; attempt++) {
      const secret = generateApiKey(mode);
      try {
        return await this.transaction(async (client) => {
          const platform = await client.query('SELECT agent_id FROM identity.platform WHERE agent_id = $1 FOR UPDATE', [agentId]);
          if (platform.rows.length === 0) throw platformNotFound(agentId);
          const keyId = generateKeyId();
          const { rows } = await client.query<{ created_at: Date }>(
            `INSERT INTO identity.api_key (key_id, agent_id, mode, secret_hash, name, last4)
             VALUES ($1, $2, $3, $4, NULL, $5) RETURNING created_at`,
            [keyId, agentId, mode, hashApiKey(secret), lastFour(secret)],
          );
          await this.audit(client, agentId, keyId, 'created', mode, null);
          return { key_id: keyId, api_key: secret, mode, name: null, created_at: rows[0].created_at };
        });
      } catch (error) {
        // A collision of 20 or 40 random base62 characters: practically impossible, but cheap to handle.
        if ((error as { code?: string }).code === UNIQUE_VIOLATION && attempt < 2) continue;
        throw error;
      }
    }
  }

  /** Revokes a key and records it; revoking a revoked key keeps its first revocation and records nothing. */
  async revokeKey(keyId: string): Promise<{ key_id: string; agent_id: string; revoked_at: Date; changed: boolean }> {
    if (!isValidKeyId(keyId)) throw keyNotFound(keyId);
    return this.transaction(async (client) => {
      const { rows } = await client.query<{ key_id: string; agent_id: string; mode: KeyMode; name: string | null; revoked_at: Date }>(
        `UPDATE identity.api_key SET revoked_at = now() WHERE key_id = $1 AND revoked_at IS NULL
         RETURNING key_id, agent_id, mode, name, revoked_at`,
        [keyId],
      );
      const [revoked] = rows;
      if (revoked) {
        await this.audit(client, revoked.agent_id, revoked.key_id, 'revoked', revoked.mode, revoked.name);
        return { key_id: revoked.key_id, agent_id: revoked.agent_id, revoked_at: revoked.revoked_at, changed: true };
      }
      const existing = await client.query<{ key_id: string; agent_id: string; revoked_at: Date | null }>(
        'SELECT key_id, agent_id, revoked_at FROM identity.api_key WHERE key_id = $1',
        [keyId],
      );
      const key = existing.rows[0];
      if (!key?.revoked_at) throw keyNotFound(keyId);
      return { key_id: key.key_id, agent_id: key.agent_id, revoked_at: key.revoked_at, changed: false };
    });
  }

  /** The audit trail of a platform's keys, oldest first; platform_not_found for an unknown platform. */
  async keyAudit(agentId: string): Promise<KeyAuditEntry[]> {
    requireAgentId(agentId);
    const platform = await this.pool.query('SELECT 1 FROM identity.platform WHERE agent_id = $1', [agentId]);
    if (platform.rows.length === 0) throw platformNotFound(agentId);
    const { rows } = await this.pool.query<KeyAuditEntry>(
      `SELECT occurred_at, action, key_id, mode, name, actor, actor_sub FROM identity.api_key_audit
        WHERE agent_id = $1 ORDER BY audit_id ASC`,
      [agentId],
    );
    return rows;
  }

  private async audit(client: pg.PoolClient, agentId: string, keyId: string, action: 'created' | 'revoked', mode: KeyMode, name: string | null): Promise<void> {
    await client.query(
      `INSERT INTO identity.api_key_audit (agent_id, key_id, action, mode, name, actor, actor_sub) VALUES ($1, $2, $3, $4, $5, 'ops', NULL)`,
      [agentId, keyId, action, mode, name],
    );
  }
}
