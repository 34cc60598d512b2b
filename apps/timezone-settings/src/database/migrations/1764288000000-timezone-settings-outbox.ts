import { outboxTableMigration } from '#libs/database';

/**
 * Transactional outbox of `settings.timezone.changed`: a change and its event commit together,
 * and the event is published (and the row deleted) after the commit. A crash between the two
 * leaves the row, which the relay publishes at the next start or sweep: no change is lost.
 */
export const TimezoneSettingsOutbox1764288000000 = outboxTableMigration('TimezoneSettingsOutbox1764288000000', 'timezone_settings');
