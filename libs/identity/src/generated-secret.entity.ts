import { Column, Entity, PrimaryColumn } from 'typeorm';
import { IDENTITY_SCHEMA } from './platform.entity.js';

/**
 * A secret the gateway generated for itself because none was configured (migration
 * 1795686268941), shared by every replica through the database. Never logged, never sent.
 */
@Entity({ schema: IDENTITY_SCHEMA, name: 'generated_secret' })
export class GeneratedSecretEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'generated_secret_pkey' })
  name: string;

  @Column({ type: 'text' })
  secret: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created_at: Date;
}
