import { IsNull, type DataSource, type FindOptionsSelect, type Repository } from 'typeorm';
import {
  KEY_MODES,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  hashesEqual,
  parseApiKey,
  type KeyMode,
} from './api-key.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { PlatformEntity, type PlatformStatus } from './platform.entity.js';

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

/** The columns of a platform that callers see. */
const PLATFORM_RECORD: FindOptionsSelect<PlatformEntity> = { agent_id: true, owner_uid: true, status: true };

function platformRecord(platform: PlatformEntity): PlatformRecord {
  return { agent_id: platform.agent_id, owner_uid: platform.owner_uid, status: platform.status };
}

function platformNotFound(agentId: string): IdentityError {
  return new IdentityError('platform_not_found', `no platform with agent id ${agentId}`);
}

/**
 * Platforms and API keys in schema `identity`, through their TypeORM entities. Writes are single
 * statements or short transactions, so concurrent ops commands and gateway replicas never see
 * half a change. Built on a DataSource (not on injected repositories) because the ops CLI and
 * the tests use it outside Nest, and its transactions span both entities.
 */
export class IdentityRepository {
  private readonly platforms: Repository<PlatformEntity>;
  private readonly keys: Repository<ApiKeyEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.platforms = dataSource.getRepository(PlatformEntity);
    this.keys = dataSource.getRepository(ApiKeyEntity);
  }

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
      const platforms = manager.getRepository(PlatformEntity);
      // ON CONFLICT DO NOTHING: two creations of one platform at once both succeed.
      const inserted = await platforms
        .createQueryBuilder()
        .insert()
        .values({ agent_id: agentId, owner_uid: ownerUid ?? null })
        .orIgnore()
        .returning(['agent_id'])
        .updateEntity(false)
        .execute();
      const platform = await platforms.findOneOrFail({ select: PLATFORM_RECORD, where: { agent_id: agentId }, lock: { mode: 'pessimistic_write' } });
      const created = (inserted.raw as unknown[]).length > 0;
      if (!created && ownerUid) {
        if (platform.owner_uid === null) {
          await platforms.update({ agent_id: agentId }, { owner_uid: ownerUid, updated_at: () => 'now()' });
          platform.owner_uid = ownerUid;
        } else if (platform.owner_uid !== ownerUid) {
          throw new IdentityError('owner_conflict', `platform ${agentId} already has a different owner uid`);
        }
      }
      return { ...platformRecord(platform), created };
    });
  }

  async findPlatform(agentId: string): Promise<PlatformRecord | null> {
    const platform = await this.platforms.findOne({ select: PLATFORM_RECORD, where: { agent_id: agentId } });
    return platform ? platformRecord(platform) : null;
  }

  /** Suspends or reactivates a platform; setting the status it already has is a no-op. */
  async setStatus(agentId: string, status: PlatformStatus): Promise<PlatformRecord> {
    requireAgentId(agentId);
    return this.dataSource.transaction(async (manager) => {
      const platforms = manager.getRepository(PlatformEntity);
      const platform = await platforms.findOne({ select: PLATFORM_RECORD, where: { agent_id: agentId }, lock: { mode: 'pessimistic_write' } });
      if (!platform) throw platformNotFound(agentId);
      if (platform.status !== status) {
        await platforms.update({ agent_id: agentId }, { status, updated_at: () => 'now()' });
        platform.status = status;
      }
      return platformRecord(platform);
    });
  }

  async createKey(agentId: string, mode: KeyMode): Promise<CreatedKey> {
    requireAgentId(agentId);
    if (!KEY_MODES.includes(mode)) throw new IdentityError('invalid_argument', 'mode must be live or test');
    for (let attempt = 0; ; attempt++) {
      const key: CreatedKey = { key_id: generateKeyId(), api_key: generateApiKey(mode), mode };
      try {
        await this.keys.insert({ key_id: key.key_id, agent_id: agentId, mode, secret_hash: hashApiKey(key.api_key) });
        return key;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === FOREIGN_KEY_VIOLATION) throw platformNotFound(agentId);
        // A collision of 20 or 40 random base62 characters: practically impossible, but cheap to handle.
        if (code === UNIQUE_VIOLATION && attempt < 2) continue;
        throw error;
      }
    }
  }

  /** Revokes a key; revoking a revoked key keeps its first revocation time. */
  async revokeKey(keyId: string): Promise<RevokedKey> {
    const result = await this.keys
      .createQueryBuilder()
      .update()
      .set({ revoked_at: () => 'COALESCE(revoked_at, now())' })
      .where({ key_id: keyId })
      .returning(['key_id', 'agent_id', 'revoked_at'])
      .updateEntity(false)
      .execute();
    const [revoked] = result.raw as RevokedKey[];
    if (!revoked) throw new IdentityError('key_not_found', `no API key with key id ${keyId}`);
    return revoked;
  }

  /** The platforms whose owner_uid is this identity (`sub` of an ID token), at most 10. */
  async platformsOwnedBy(ownerUid: string): Promise<{ agent_id: string; status: string }[]> {
    const platforms = await this.platforms.find({
      select: { agent_id: true, status: true },
      where: { owner_uid: ownerUid },
      order: { agent_id: 'ASC' },
      take: 10,
    });
    return platforms.map(({ agent_id, status }) => ({ agent_id, status }));
  }

  /**
   * The unrevoked key whose secret this is, with its platform's status; null for anything
   * else. The lookup goes by hash (indexed, unique); the hashes are then compared in constant
   * time so that the answer does not depend on how much of a guess matched.
   */
  async findActiveKeyBySecret(secret: string): Promise<ActiveKey | null> {
    const parsed = parseApiKey(secret);
    if (!parsed) return null;
    const hash = hashApiKey(secret);
    // One statement (a find with `relations` and a limit would run two).
    const key = await this.keys
      .createQueryBuilder('key')
      .innerJoin('key.platform', 'platform')
      .select(['key.key_id', 'key.agent_id', 'key.mode', 'key.secret_hash', 'platform.agent_id', 'platform.status'])
      .where({ secret_hash: hash, revoked_at: IsNull() })
      .getOne();
    if (!key?.platform || !hashesEqual(key.secret_hash, hash) || key.mode !== parsed.mode) return null;
    return { key_id: key.key_id, agent_id: key.agent_id, mode: key.mode, platform_status: key.platform.status };
  }
}
