import { Inject, Injectable } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { NatsClient, OutboxRelay } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { TimezoneSettingsService } from './timezone-settings.service.js';

/**
 * Publishes `settings.timezone.changed` from the timezone-settings outbox (stream SETTINGS):
 * right after a change commits, and by a sweep of leftovers. Consumers keep the latest
 * updated_at, so a repeat is harmless.
 */
@Injectable()
export class TimezoneEventsRelay extends OutboxRelay {
  constructor(nats: NatsClient, settings: TimezoneSettingsService, @Inject(LOGGER) logger: Logger) {
    super(nats, settings, logger, { name: 'settings', describes: 'settings.timezone.changed events' });
  }
}
