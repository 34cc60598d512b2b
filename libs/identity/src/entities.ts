import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { KeyMode } from './api-key.js';

export const IDENTITY_SCHEMA = 'identity';

export const PLATFORM_STATUSES = ['active', 'suspended'] as const;
export type PlatformStatus = (typeof PLATFORM_STATUSES)[number];

/** A platform (an application that shows recommendations), identified by its agent id. */
@Entity({ schema: IDENTITY_SCHEMA, name: 'platform' })
export class PlatformEntity {
  @PrimaryColumn({ type: 'text' })
  agent_id: string;

  /** `sub` of the owner's ID token (DESIGN §3); null until an owner is assigned. */
  @Column({ type: 'text', nullable: true })
  owner_uid: string | null;

  @Column({ type: 'text' })
  status: PlatformStatus;

  @Column({ type: 'timestamptz' })
  created_at: Date;

  @Column({ type: 'timestamptz' })
  updated_at: Date;
}

/** An API key of a platform. Only the SHA-256 of the secret is stored. */
@Entity({ schema: IDENTITY_SCHEMA, name: 'api_key' })
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' })
  key_id: string;

  @Column({ type: 'text' })
  agent_id: string;

  @Column({ type: 'text' })
  mode: KeyMode;

  @Column({ type: 'bytea' })
  secret_hash: Buffer;

  @Column({ type: 'timestamptz' })
  created_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at: Date | null;
}
