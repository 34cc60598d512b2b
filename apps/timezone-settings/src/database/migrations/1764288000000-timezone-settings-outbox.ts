import { OutboxTableMigration } from '#libs/database';

/**
 * Transactional outbox of `settings.timezone.changed`: a change and its event commit together,
 * and the event is published (and the row deleted) after the commit. A crash between the two
 * leaves the row, which the relay publishes at the next start or sweep: no change is lost.
 */
export class TimezoneSettingsOutbox1764288000000 extends OutboxTableMigration {
  name = 'TimezoneSettingsOutbox1764288000000';
  protected schema = 'timezone_settings';
}
