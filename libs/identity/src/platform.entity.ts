import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

export const IDENTITY_SCHEMA = 'identity';

export const PLATFORM_STATUSES = ['active', 'suspended'] as const;
export type PlatformStatus = (typeof PLATFORM_STATUSES)[number];

/**
 * A platform (an application that shows recommendations), identified by its agent id. Names of
 * constraints and indexes are those migration 1764201600000 gave them, so that the entity
 * equals the migrated schema (test/integration/entity-schema-drift.spec.ts).
 */
@Entity({ schema: IDENTITY_SCHEMA, name: 'platform' })
@Check('platform_status_check', `status IN ('active', 'suspended')`)
@Index('platform_owner_uid_idx', ['owner_uid'], { where: 'owner_uid IS NOT NULL' })
export class PlatformEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'platform_pkey' })
  agent_id: string;

  /** `sub` of the owner's ID token (DESIGN §3); null until an owner is assigned. */
  @Column({ type: 'text', nullable: true })
  owner_uid: string | null;

  @Column({ type: 'text', default: 'active' })
  status: PlatformStatus;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created_at: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updated_at: Date;
}
