import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { KeyMode } from '#libs/identity-core';
import { IDENTITY_SCHEMA } from './platform.entity.js';

export const KEY_AUDIT_ACTIONS = ['created', 'revoked'] as const;
export type KeyAuditAction = (typeof KEY_AUDIT_ACTIONS)[number];

/**
 * Who changed a key: the platform owner (the `sub` of the ID token that made the request) or
 * an operator through the ops CLI.
 */
export type KeyActor = { kind: 'owner'; sub: string } | { kind: 'ops' };

/**
 * One creation or revocation of an API key, written in the transaction that makes the change
 * (so there is no change without its entry, and no entry without its change). Never updated or
 * deleted; a revocation of a key already revoked changes nothing and is not recorded.
 */
@Entity({ schema: IDENTITY_SCHEMA, name: 'api_key_audit' })
@Check('api_key_audit_action_check', `action IN ('created', 'revoked')`)
@Check('api_key_audit_actor_check', `(actor = 'owner' AND actor_sub IS NOT NULL) OR (actor = 'ops' AND actor_sub IS NULL)`)
@Index('api_key_audit_agent_id_idx', ['agent_id', 'audit_id'])
export class ApiKeyAuditEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'api_key_audit_pkey' })
  audit_id: string;

  @Column({ type: 'text' })
  agent_id: string;

  @Column({ type: 'text' })
  key_id: string;

  @Column({ type: 'text' })
  action: KeyAuditAction;

  @Column({ type: 'text' })
  mode: KeyMode;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'text' })
  actor: KeyActor['kind'];

  @Column({ type: 'text', nullable: true })
  actor_sub: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  occurred_at: Date;
}
