import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { IDENTITY_SCHEMA } from './platform.entity.js';

/**
 * The identity version (migration 1795760000000): a single row whose `version` triggers on
 * `api_key` and `platform` move with every change of what the gateway caches. Gateways poll it
 * (IdentityRepository.identityVersion) and drop their identity cache when it moved.
 */
@Entity({ schema: IDENTITY_SCHEMA, name: 'identity_version' })
@Check('identity_version_id_check', 'id = 1')
export class IdentityVersionEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'identity_version_pkey' })
  id: number;

  /** A bigint: read as a string. */
  @Column({ type: 'bigint' })
  version: string;
}
