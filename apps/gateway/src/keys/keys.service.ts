import { Inject, Injectable } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { BroadcastSubjects } from '#libs/contracts';
import { isTransientDatabaseError } from '#libs/database';
import { IdentityError, IdentityRepository, encodeIdentityChanged, type KeyRecord } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import type { Logger } from '#libs/observability';
import type { OwnerPrincipal } from '../auth/id-token.guard.js';
import { IdentityCacheService } from '../auth/identity-cache.service.js';
import { KeyUsageService } from '../auth/key-usage.service.js';
import { ProblemException } from '../http/problem.js';
import { MAX_ACTIVE_KEYS, type CreateKeyRequestDto, type CreatedKeyDto, type KeyDto } from './keys.dto.js';

export const KEY_NOT_FOUND = 'No API key with this id exists for this platform.';
export const KEY_LIMIT = `The platform already has ${MAX_ACTIVE_KEYS} unrevoked API keys; revoke one before creating another.`;
export const KEYS_UNAVAILABLE = 'Key management is temporarily unavailable; retry later.';

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/**
 * API keys of the signed-in owner's platform (DESIGN §7), on the identity schema that the ops
 * CLI also writes (IdentityRepository): the platform always comes from the token, never from
 * the request. Every change is recorded in the audit trail in its own transaction (who: the
 * token's `sub`) and announced on `identity.v1.changed`, so that every gateway replica drops the
 * platform's cached lookups at once (this one before answering): a revoked key is refused
 * everywhere within the broadcast's delay, and within IDENTITY_VERSION_POLL_MS (the identity
 * version the change moved) should a replica miss it.
 */
@Injectable()
export class KeysService {
  constructor(
    private readonly identity: IdentityRepository,
    private readonly cache: IdentityCacheService,
    private readonly usage: KeyUsageService,
    private readonly nats: NatsClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async list(owner: OwnerPrincipal): Promise<KeyDto[]> {
    const keys = await this.call(() => this.identity.listKeys(owner.agent_id));
    return keys.map((key) => this.present(key));
  }

  async create(owner: OwnerPrincipal, body: CreateKeyRequestDto): Promise<CreatedKeyDto> {
    const key = await this.call(() =>
      this.identity.createKey(owner.agent_id, body.mode, { name: body.name, actor: { kind: 'owner', sub: owner.sub }, maxActiveKeys: MAX_ACTIVE_KEYS }),
    );
    this.announce(owner.agent_id, key.key_id);
    this.logger.info({ agentId: owner.agent_id, keyId: key.key_id, mode: key.mode }, 'API key created by its owner');
    return { key_id: key.key_id, api_key: key.api_key, name: body.name, mode: key.mode, created_at: key.created_at.toISOString() };
  }

  async revoke(owner: OwnerPrincipal, keyId: string): Promise<void> {
    const revoked = await this.call(() => this.identity.revokeKey(keyId, { agentId: owner.agent_id, actor: { kind: 'owner', sub: owner.sub } }));
    if (!revoked.changed) return;
    this.announce(owner.agent_id, keyId);
    this.logger.info({ agentId: owner.agent_id, keyId }, 'API key revoked by its owner');
  }

  /** The key as listed: the use this replica saw last when it is newer than the stored one (not written yet). */
  private present(key: KeyRecord): KeyDto {
    const pending = key.revoked_at === null ? this.usage.pendingUse(key.key_id) : undefined;
    const lastUsed = pending && (key.last_used_at === null || pending > key.last_used_at) ? pending : key.last_used_at;
    return {
      key_id: key.key_id,
      name: key.name,
      mode: key.mode,
      last4: key.last4,
      created_at: key.created_at.toISOString(),
      last_used_at: iso(lastUsed),
      revoked_at: iso(key.revoked_at),
    };
  }

  /** Drops this replica's cached lookups of the platform now, and every replica's through the broadcast. */
  private announce(agentId: string, keyId: string): void {
    this.cache.invalidatePlatform(agentId);
    try {
      this.nats.connection.publish(BroadcastSubjects.identityChanged, encodeIdentityChanged({ agent_id: agentId, key_id: keyId }));
    } catch (error) {
      // The other replicas see the identity version move within IDENTITY_VERSION_POLL_MS anyway.
      this.logger.warn({ err: (error as Error).message }, 'identity change could not be announced; other replicas rely on the identity version poll');
    }
  }

  /** The repository's answer, its refusals as the owner API's problems, a database outage as 503. */
  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof IdentityError) {
        if (error.code === 'key_not_found') throw new ProblemException('key-not-found', KEY_NOT_FOUND);
        if (error.code === 'key_limit_reached') throw new ProblemException('key-limit-reached', KEY_LIMIT);
        if (error.code === 'invalid_argument') throw new ProblemException('invalid-body', `${error.message}.`);
      }
      if (isTransientDatabaseError(error)) {
        this.logger.error({ err: (error as Error).message }, 'key management failed: database unavailable');
        throw new ProblemException('service-unavailable', KEYS_UNAVAILABLE, { 'Retry-After': '5' });
      }
      throw error;
    }
  }
}
