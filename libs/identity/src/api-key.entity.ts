import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import type { KeyMode } from './api-key.js';
import { IDENTITY_SCHEMA, PlatformEntity } from './platform.entity.js';

/** An API key of a platform. Only the SHA-256 of the secret is stored, never the secret. */
@Entity({ schema: IDENTITY_SCHEMA, name: 'api_key' })
@Check('api_key_mode_check', `mode IN ('live', 'test')`)
@Check('api_key_secret_hash_check', 'octet_length(secret_hash) = 32')
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
}
