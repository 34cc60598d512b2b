import { IsNull, type DataSource, type EntityManager, type FindOptionsSelect, type Repository } from 'typeorm';
import {
  KEY_MODES,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  hashesEqual,
  isValidKeyId,
  keyNameProblem,
  lastFour,
  parseApiKey,
  IdentityError,
  invalidMode,
  keyNotFound,
  ownerConflict,
  platformNotFound,
  requireAgentId,
  requireOwnerUid,
  type KeyMode,
} from '#libs/identity-core';
import { ApiKeyAuditEntity, type KeyActor, type KeyAuditAction } from './api-key-audit.entity.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { PlatformEntity, type PlatformStatus } from './platform.entity.js';

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
  name: string | null;
  created_at: Date;
}

export interface RevokedKey {
  key_id: string;
  agent_id: string;
  revoked_at: Date;
  /** false when the key was already revoked (nothing changed, nothing recorded). */
  changed: boolean;
}

/** A key as its owner sees it: never the secret or its hash. */
export interface KeyRecord {
  key_id: string;
  name: string | null;
  mode: KeyMode;
  last4: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A successful use of a key seen by a gateway, written in batches (recordKeyUsage). */
export interface KeyUse {
  key_id: string;
  used_at: Date;
  /** The last four characters of the secret that was used: fills `last4` of keys made before it existed. */
  last4: string;
}

/** One entry of the audit trail of a platform's keys, oldest first. */
export interface KeyAuditEntry {
  occurred_at: Date;
  action: KeyAuditAction;
  key_id: string;
  mode: KeyMode;
  name: string | null;
  actor: KeyActor['kind'];
  actor_sub: string | null;
}

export interface CreateKeyOptions {
  /** The owner's name for the key; null (the default) for keys made by the ops CLI. */
  name?: string | null;
  /** Who creates it (recorded in the audit trail); ops by default. */
  actor?: KeyActor;
  /** Refuse (key_limit_reached) when the platform already has this many unrevoked keys. */
  maxActiveKeys?: number;
}

export interface RevokeKeyOptions {
  /** Only a key of this platform (an owner revokes only its own keys): another platform's is key_not_found. */
  agentId?: string;
  actor?: KeyActor;
}

/** What an authenticated request learns about its key. */
export interface ActiveKey {
  key_id: string;
  agent_id: string;
  mode: KeyMode;
  platform_status: PlatformStatus;
}

const UNIQUE_VIOLATION = '23505';
const OPS: KeyActor = { kind: 'ops' };

/** The columns of a platform that callers see. */
const PLATFORM_RECORD: FindOptionsSelect<PlatformEntity> = { agent_id: true, owner_uid: true, status: true };

function platformRecord(platform: PlatformEntity): PlatformRecord {
  return { agent_id: platform.agent_id, owner_uid: platform.owner_uid, status: platform.status };
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
    requireOwnerUid(ownerUid);
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
          throw ownerConflict(agentId);
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

  /**
   * Creates a key and its audit entry in one transaction. The platform's row is locked first
   * (SELECT … FOR UPDATE), so concurrent creations for one platform are counted one after the
   * other and `maxActiveKeys` cannot be overrun by a burst, whichever replica or CLI makes them.
   */
  async createKey(agentId: string, mode: KeyMode, options: CreateKeyOptions = {}): Promise<CreatedKey> {
    requireAgentId(agentId);
    if (!KEY_MODES.includes(mode)) throw invalidMode();
    const name = options.name ?? null;
    if (name !== null) {
      const problem = keyNameProblem(name);
      if (problem) throw new IdentityError('invalid_argument', problem);
    }
    const actor = options.actor ?? OPS;
    for (let attempt = 0; ; attempt++) {
      const secret = generateApiKey(mode);
      try {
        return await this.dataSource.transaction(async (manager) => {
          const platform = await manager
            .getRepository(PlatformEntity)
            .findOne({ select: { agent_id: true }, where: { agent_id: agentId }, lock: { mode: 'pessimistic_write' } });
          if (!platform) throw platformNotFound(agentId);
          const keys = manager.getRepository(ApiKeyEntity);
          if (options.maxActiveKeys !== undefined) {
            const active = await keys.countBy({ agent_id: agentId, revoked_at: IsNull() });
            if (active >= options.maxActiveKeys) {
              throw new IdentityError('key_limit_reached', `platform ${agentId} already has ${active} unrevoked API keys (at most ${options.maxActiveKeys})`);
            }
          }
          const keyId = generateKeyId();
          const inserted = await keys
            .createQueryBuilder()
            .insert()
            .values({ key_id: keyId, agent_id: agentId, mode, secret_hash: hashApiKey(secret), name, last4: lastFour(secret) })
            .returning(['created_at'])
            .updateEntity(false)
            .execute();
          await this.audit(manager, { agent_id: agentId, key_id: keyId, action: 'created', mode, name }, actor);
          const [{ created_at }] = inserted.raw as { created_at: Date }[];
          return { key_id: keyId, api_key: secret, mode, name, created_at };
        });
      } catch (error) {
        // A collision of 20 or 40 random base62 characters: practically impossible, but cheap to handle.
        if ((error as { code?: string }).code === UNIQUE_VIOLATION && attempt < 2) continue;
        throw error;
      }
    }
  }

  /**
   * Revokes a key and records it, in one transaction; revoking a revoked key keeps its first
   * revocation time and records nothing (`changed: false`). With `agentId`, a key of another
   * platform is key_not_found, as an unknown one.
   */
  async revokeKey(keyId: string, options: RevokeKeyOptions = {}): Promise<RevokedKey> {
    const notFound = () => keyNotFound(keyId);
    if (!isValidKeyId(keyId)) throw notFound();
    const where = { key_id: keyId, ...(options.agentId !== undefined ? { agent_id: options.agentId } : {}) };
    return this.dataSource.transaction(async (manager) => {
      const keys = manager.getRepository(ApiKeyEntity);
      const result = await keys
        .createQueryBuilder()
        .update()
        .set({ revoked_at: () => 'now()' })
        .where({ ...where, revoked_at: IsNull() })
        .returning(['key_id', 'agent_id', 'mode', 'name', 'revoked_at'])
        .updateEntity(false)
        .execute();
      const [revoked] = result.raw as (Pick<ApiKeyEntity, 'key_id' | 'agent_id' | 'mode' | 'name'> & { revoked_at: Date })[];
      if (revoked) {
        await this.audit(manager, { agent_id: revoked.agent_id, key_id: revoked.key_id, action: 'revoked', mode: revoked.mode, name: revoked.name }, options.actor ?? OPS);
        return { key_id: revoked.key_id, agent_id: revoked.agent_id, revoked_at: revoked.revoked_at, changed: true };
      }
      const existing = await keys.findOne({ select: { key_id: true, agent_id: true, revoked_at: true }, where });
      if (!existing?.revoked_at) throw notFound();
      return { key_id: existing.key_id, agent_id: existing.agent_id, revoked_at: existing.revoked_at, changed: false };
    });
  }

  /** Every key of a platform, newest first, revoked ones included; never a secret or hash. */
  async listKeys(agentId: string): Promise<KeyRecord[]> {
    return this.keys.find({
      select: { key_id: true, name: true, mode: true, last4: true, created_at: true, last_used_at: true, revoked_at: true },
      where: { agent_id: agentId },
      order: { created_at: 'DESC', key_id: 'DESC' },
    });
  }

  /**
   * Writes a batch of key uses in one statement: `last_used_at` only moves forward (replicas
   * flush in any order), `last4` is filled where a key made before it existed lacks it.
   */
  // Raw SQL: one UPDATE … FROM unnest for the whole batch, which TypeORM's update() cannot express.
  async recordKeyUsage(uses: KeyUse[]): Promise<void> {
    if (uses.length === 0) return;
    await this.dataSource.query(
      `UPDATE identity.api_key AS k
          SET last_used_at = GREATEST(k.last_used_at, u.used_at), last4 = COALESCE(k.last4, u.last4)
         FROM unnest($1::text[], $2::timestamptz[], $3::text[]) AS u(key_id, used_at, last4)
        WHERE k.key_id = u.key_id
          AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at OR k.last4 IS NULL)`,
      [uses.map((u) => u.key_id), uses.map((u) => u.used_at.toISOString()), uses.map((u) => u.last4)],
    );
  }

  /** The audit trail of a platform's keys, oldest first; platform_not_found for an unknown platform. */
  async keyAudit(agentId: string): Promise<KeyAuditEntry[]> {
    requireAgentId(agentId);
    if (!(await this.platforms.existsBy({ agent_id: agentId }))) throw platformNotFound(agentId);
    return this.dataSource.getRepository(ApiKeyAuditEntity).find({
      select: { occurred_at: true, action: true, key_id: true, mode: true, name: true, actor: true, actor_sub: true },
      where: { agent_id: agentId },
      order: { audit_id: 'ASC' },
    });
  }

  private async audit(
    manager: EntityManager,
    change: Pick<ApiKeyAuditEntity, 'agent_id' | 'key_id' | 'action' | 'mode' | 'name'>,
    actor: KeyActor,
  ): Promise<void> {
    await manager.getRepository(ApiKeyAuditEntity).insert({ ...change, actor: actor.kind, actor_sub: actor.kind === 'owner' ? actor.sub : null });
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
   * The identity version (migration 1795760000000): moved, in the same transaction, by every
   * change of a key or platform that a gateway caches (not by `last_used_at`/`last4` writes).
   * A gateway polls it and drops its identity cache when it moved. A bigint, as a string.
   */
  // Raw SQL: the cheapest statement on a path every replica runs several times a second.
  async identityVersion(): Promise<string> {
    const rows = (await this.dataSource.query('SELECT version::text AS version FROM identity.identity_version WHERE id = 1')) as { version: string }[];
    if (rows.length !== 1) throw new Error('identity.identity_version has no row: run the identity migrations');
    return rows[0].version;
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
