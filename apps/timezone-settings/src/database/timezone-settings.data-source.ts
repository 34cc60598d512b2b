import { createServiceDataSource } from '#libs/database';
import { TimezoneSettingsInitial1764201600001 } from './migrations/1764201600001-timezone-settings-initial.js';
import { TimezoneSettingsOutbox1764288000000 } from './migrations/1764288000000-timezone-settings-outbox.js';

export const TIMEZONE_SETTINGS_SCHEMA = 'timezone_settings';

export function createTimezoneSettingsDataSource(url: string, poolSize: number) {
  return createServiceDataSource({
    url,
    schema: TIMEZONE_SETTINGS_SCHEMA,
    entities: [],
    migrations: [TimezoneSettingsInitial1764201600001, TimezoneSettingsOutbox1764288000000],
    poolSize,
    applicationName: 'timezone-settings',
  });
}
