import type { IdentityChangedMessage, KeyMode } from '#libs/identity-core';
import type { KeyAuditEntry, PlatformRecord, PlatformStatus } from '#libs/identity';

export interface CommandOutcome {
  /** The one JSON object printed on stdout. */
  output: Record<string, unknown>;
  /** What to announce on `identity.v1.changed`; none for a command that changes nothing. */
  change?: IdentityChangedMessage;
}

/**
 * The identity writes the commands make: the CLI's IdentityStore (plain pg, identity-store.ts),
 * or IdentityRepository (TypeORM, libs/identity) for a caller that has one.
 */
export interface IdentityWrites {
  createPlatform(agentId: string, ownerUid?: string): Promise<PlatformRecord>;
  setStatus(agentId: string, status: PlatformStatus): Promise<PlatformRecord>;
  createKey(agentId: string, mode: KeyMode): Promise<{ key_id: string; api_key: string; mode: KeyMode }>;
  revokeKey(keyId: string): Promise<{ key_id: string; agent_id: string }>;
  keyAudit(agentId: string): Promise<KeyAuditEntry[]>;
}

/** The platform and key commands (identity-commands.ts parses them). */
export type IdentityCommand =
  | { kind: 'platform.create'; agentId: string; ownerUid?: string }
  | { kind: 'platform.status'; agentId: string; status: PlatformStatus }
  | { kind: 'key.create'; agentId: string; mode: KeyMode }
  | { kind: 'key.revoke'; keyId: string }
  | { kind: 'key.audit'; agentId: string };

/** Runs one command against the identity schema. IdentityError propagates to the caller. */
export async function runOpsCommand(command: IdentityCommand, identity: IdentityWrites): Promise<CommandOutcome> {
  switch (command.kind) {
    case 'platform.create': {
      const platform = await identity.createPlatform(command.agentId, command.ownerUid);
      return {
        output: { agent_id: platform.agent_id, owner_uid: platform.owner_uid, status: platform.status },
        change: { agent_id: platform.agent_id },
      };
    }
    case 'platform.status': {
      const platform = await identity.setStatus(command.agentId, command.status);
      return { output: { agent_id: platform.agent_id, status: platform.status }, change: { agent_id: platform.agent_id } };
    }
    case 'key.create': {
      const key = await identity.createKey(command.agentId, command.mode);
      return { output: { key_id: key.key_id, api_key: key.api_key, mode: key.mode }, change: { agent_id: command.agentId, key_id: key.key_id } };
    }
    case 'key.revoke': {
      const key = await identity.revokeKey(command.keyId);
      return { output: { key_id: key.key_id, revoked: true }, change: { agent_id: key.agent_id, key_id: key.key_id } };
    }
    case 'key.audit': {
      const entries = await identity.keyAudit(command.agentId);
      return {
        output: {
          agent_id: command.agentId,
          entries: entries.map((entry) => ({
            at: entry.occurred_at.toISOString(),
            action: entry.action,
            key_id: entry.key_id,
            mode: entry.mode,
            name: entry.name,
            // Who: "ops" (this CLI) or "owner" with the `sub` of the owner's ID token.
            actor: entry.actor,
            sub: entry.actor_sub,
          })),
        },
      };
    }
  }
}
