import type { DataSource } from 'typeorm';
import {
  KEY_MODES,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  hashesEqual,
  parseApiKey,
  type KeyMode,
} from './api-key.js';
import type { PlatformStatus } from './entities.js';

export type IdentityErrorCode = 'invalid_argument' | 'platform_not_found' | 'key_not_found' | 'owner_conflict';

/** A failure the caller can act on (the ops CLI prints its message and exits non-zero). */
export class IdentityError extends Error {
  constructor(
    readonly code: IdentityErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'IdentityError';
  }
}

// Agent ids travel in NATS payloads, logs and report rows: keep them to a plain, bounded shape
// (the reporting contract caps agent_id at 200 characters).
const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
// Owner uids are the `sub` of an ID token: any string of 1–255 characters without controls.
const OWNER_UID_PATTERN = /^[^\u0000-\u001f\u007f]{1,255}$/;

export function isValidAgentId(agentId: string): boolean {
  return AGENT_ID_PATTERN.test(agentId);
}

export function isValidOwnerUid(ownerUid: string): boolean {
  return OWNER_UID_PATTERN.test(ownerUid) && ownerUid.trim() === ownerUid;
}

export interface PlatformRecord {
  agent_id: string;
  owner_uid: string | null;
  status: PlatformStatus;
}

export interface CreatedKey {
  key_id: string;
  /** The secret: returned once, never stored. */
  api_key: string;
  mode: KeyMode;
}

export interface RevokedKey {
  key_id: string;
  agent_id: string;
  revoked_at: Date;
}

/** What an authenticated request learns about its key. */
export interface ActiveKey {
  key_id: string;
  agent_id: string;
  mode: KeyMode;
  platform_status: PlatformStatus;
}

const FOREIGN_KEY_VIOLATION = '23503';
const UNIQUE_VIOLATION = '23505';

function requireAgentId(agentId: string): void {
  if (!isValidAgentId(agentId)) {
    throw new IdentityError(
      'invalid_argument',
      'agent id must be 1-200 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit',
    );
  }
}

/**
 * Platforms and API keys in schema `identity`. Writes are single statements or short
 * transactions, so concurrent ops commands and gateway replicas never see half a change.
 */
export class IdentityRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Idempotent. A missing platform is created active. An existing one is returned as it is
   * (a suspended platform stays suspended); an owner uid is recorded when the platform has
   * none yet, and a different owner uid than the recorded one is refused (owner_conflict):
   * silently moving ownership would hand the platform's payouts to another identity.
   */
  async createPlatform(agentId: string, ownerUid?: string | null): Promise<PlatformRecord & { created: boolean }> {
    requireAgentId(agentId);
    if (ownerUid !== undefined && ownerUid !== null && !isValidOwnerUid(ownerUid)) {
      throw new IdentityError('invalid_argument', 'owner uid must be 1-255 characters without control characters or surrounding spaces');
    }
    return this.dataSource.transaction(async (manager) => {
      const inserted: unknown[] = await manager.query(
        `INSERT INTO identity.platform (agent_id, owner_uid, status) VALUES ($1, $2, 'active')
         ON CONFLICT (agent_id) DO NOTHING RETURNING agent_id`,
        [agentId, ownerUid ?? null],
      );
      const [row]: PlatformRecord[] = await manager.query(
        `SELECT agent_id, owner_uid, status FROM identity.platform WHERE agent_id = $1 FOR UPDATE`,
        [agentId],
      );
      const created = inserted.length > 0;
      if (!created && ownerUid) {
        if (row.owner_uid === null) {
          await manager.query(`UPDATE identity.platform SET owner_uid = $2, updated_at = now() WHERE agent_id = $1`, [agentId, ownerUid]);
          row.owner_uid = ownerUid;
        } else if (row.owner_uid !== ownerUid) {
          throw new IdentityError('owner_conflict', `platform ${agentId} already has a different owner uid`);
        }
      }
      return { agent_id: row.agent_id, owner_uid: row.owner_uid, status: row.status, created };
    });
  }

  async findPlatform(agentId: string): Promise<PlatformRecord | null> {
    const [row]: PlatformRecord[] = await this.dataSource.query(
      `SELECT agent_id, owner_uid, status FROM identity.platform WHERE agent_id = $1`,
      [agentId],
    );
    return row ?? null;
  }

  /** Suspends or reactivates a platform; setting the status it already has is a no-op. */
  async setStatus(agentId: string, status: PlatformStatus): Promise<PlatformRecord> {
    requireAgentId(agentId);
    const [rows]: [PlatformRecord[], number] = await this.dataSource.query(
      `UPDATE identity.platform
          SET status = $2, updated_at = CASE WHEN status = $2 THEN updated_at ELSE now() END
        WHERE agent_id = $1
        RETURNING agent_id, owner_uid, status`,
      [agentId, status],
    );
    if (rows.length === 0) throw new IdentityError('platform_not_found', `no platform with agent id ${agentId}`);
    return rows[0];
  }

  async createKey(agentId: string, mode: KeyMode): Promise<CreatedKey> {
    requireAgentId(agentId);
    if (!KEY_MODES.includes(mode)) throw new IdentityError('invalid_argument', 'mode must be live or test');
    for (let attempt = 0; ; attempt++) {
      const key: CreatedKey = { key_id: generateKeyId(), api_key: generateApiKey(mode), mode };
      try {
        await this.dataSource.query(
          `INSERT INTO identity.api_key (key_id, agent_id, mode, secret_hash) VALUES ($1, $2, $3, $4)`,
          [key.key_id, agentId, mode, hashApiKey(key.api_key)],
        );
        return key;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === FOREIGN_KEY_VIOLATION) throw new IdentityError('platform_not_found', `no platform with agent id ${agentId}`);
        // A collision of 20 or 40 random base62 characters: practically impossible, but cheap to handle.
        if (code === UNIQUE_VIOLATION && attempt < 2) continue;
        throw error;
      }
    }
  }

  /** Revokes a key; revoking a revoked key keeps its first revocation time. */
  async revokeKey(keyId: string): Promise<RevokedKey> {
    const [rows]: [RevokedKey[], number] = await this.dataSource.query(
      `UPDATE identity.api_key SET revoked_at = COALESCE(revoked_at, now())
        WHERE key_id = $1
        RETURNING key_id, agent_id, revoked_at`,
      [keyId],
    );
    if (rows.length === 0) throw new IdentityError('key_not_found', `no API key with key id ${keyId}`);
    return rows[0];
  }

  /**
   * The unrevoked key whose secret this is, with its platform's status; null for anything
   * else. The lookup goes by hash (indexed, unique); the hashes are then compared in constant
   * time so that the answer does not depend on how much of a guess matched.
   */
  /** The platforms whose owner_uid is this identity (`sub` of an ID token), at most 10. */
  async platformsOwnedBy(ownerUid: string): Promise<{ agent_id: string; status: string }[]> {
    return this.dataSource.query(
      `SELECT agent_id, status FROM identity.platform WHERE owner_uid = $1 ORDER BY agent_id LIMIT 10`,
      [ownerUid],
    );
  }

  async findActiveKeyBySecret(secret: string): Promise<ActiveKey | null> {
    const parsed = parseApiKey(secret);
    if (!parsed) return null;
    const hash = hashApiKey(secret);
    const [row]: (ActiveKey & { secret_hash: Buffer })[] = await this.dataSource.query(
      `SELECT k.key_id, k.agent_id, k.mode, k.secret_hash, p.status AS platform_status
         FROM identity.api_key k JOIN identity.platform p ON p.agent_id = k.agent_id
        WHERE k.secret_hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    if (!row || !hashesEqual(row.secret_hash, hash) || row.mode !== parsed.mode) return null;
    return { key_id: row.key_id, agent_id: row.agent_id, mode: row.mode, platform_status: row.platform_status };
  }
}
