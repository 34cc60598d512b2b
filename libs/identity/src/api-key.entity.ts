import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import type { KeyMode } from '#libs/identity-core';
import { IDENTITY_SCHEMA, PlatformEntity } from './platform.entity.js';

/**
 * An API key of a platform. Only the SHA-256 of the secret is stored, never the secret; `last4`
 * (its last four characters) lets an owner tell keys apart.
 */
@Entity({ schema: IDENTITY_SCHEMA, name: 'api_key' })
@Check('api_key_mode_check', `mode IN ('live', 'test')`)
@Check('api_key_secret_hash_check', 'octet_length(secret_hash) = 32')
@Check('api_key_name_check', 'name IS NULL OR char_length(name) BETWEEN 1 AND 64')
@Check('api_key_last4_check', `last4 IS NULL OR last4 ~ '^[0-9A-Za-z]{4}$'`)
@Unique('api_key_secret_hash_key', ['secret_hash'])
@Index('api_key_agent_id_idx', ['agent_id'])
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'api_key_pkey' })
  key_id: string;

  @Column({ type: 'text' })
  agent_id: string;

  @ManyToOne(() => PlatformEntity, { nullable: false })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'api_key_agent_id_fkey' })
  platform?: PlatformEntity;

  @Column({ type: 'text' })
  mode: KeyMode;

  @Column({ type: 'bytea' })
  secret_hash: Buffer;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at: Date | null;

  /** The owner's name for the key (1–64 characters); null for keys made by the ops CLI. */
  @Column({ type: 'text', nullable: true })
  name: string | null;

  /** The last four characters of the secret; null for a key made before migration 1795740000000 until its next use. */
  @Column({ type: 'text', nullable: true })
  last4: string | null;

  /** Within a minute of the latest successful use (the gateway writes uses in batches); null: never used. */
  @Column({ type: 'timestamptz', nullable: true })
  last_used_at: Date | null;
}
