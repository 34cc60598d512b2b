import { createServiceDataSource, type ServiceDataSource } from '#libs/database';
import { PlatformTimezoneEntity, TIMEZONE_SETTINGS_SCHEMA } from '../settings/platform-timezone.entity.js';
import { TimezoneOutboxEntity } from '../settings/timezone-outbox.entity.js';
import { TimezoneSettingsInitial1764201600001 } from './migrations/1764201600001-timezone-settings-initial.js';
import { TimezoneSettingsOutbox1764288000000 } from './migrations/1764288000000-timezone-settings-outbox.js';

export { TIMEZONE_SETTINGS_SCHEMA };

export function createTimezoneSettingsDataSource(url: string, poolSize: number, applicationName = 'timezone-settings'): ServiceDataSource {
  return createServiceDataSource({
    url,
    schema: TIMEZONE_SETTINGS_SCHEMA,
    entities: [PlatformTimezoneEntity, TimezoneOutboxEntity],
    migrations: [TimezoneSettingsInitial1764201600001, TimezoneSettingsOutbox1764288000000],
    poolSize,
    applicationName,
  });
}
