import { Column, Entity, PrimaryColumn } from 'typeorm';

export const TIMEZONE_SETTINGS_SCHEMA = 'timezone_settings';

/**
 * The reporting timezone of a platform (migration 1764201600001). A platform without a row
 * reports in UTC. updated_at is whole milliseconds and strictly increases per platform.
 */
@Entity({ schema: TIMEZONE_SETTINGS_SCHEMA, name: 'platform_timezone' })
export class PlatformTimezoneEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'platform_timezone_pkey' })
  agent_id: string;

  @Column({ type: 'text' })
  reporting_timezone: string;

  @Column({ type: 'timestamptz' })
  updated_at: Date;
}
