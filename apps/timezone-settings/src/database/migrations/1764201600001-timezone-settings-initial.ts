import { sqlMigration } from '#libs/database';

/**
 * The reporting timezone of each platform (SPEC "Reporting timezone setting"). A platform
 * without a row reports in UTC.
 */
export const TimezoneSettingsInitial1764201600001 = sqlMigration(
  'TimezoneSettingsInitial1764201600001',
  [
    `
      CREATE TABLE timezone_settings.platform_timezone (
        agent_id text PRIMARY KEY,
        reporting_timezone text NOT NULL,
        updated_at timestamptz NOT NULL
      )`,
  ],
  [
    'DROP TABLE IF EXISTS timezone_settings.platform_timezone',
  ],
);
