import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LOGGER } from '#libs/bootstrap';
import type { TimezoneChangedEventDto } from '#libs/contracts';
import { OutboxRepository } from '#libs/database';
import { NatsClient, OutboxRelay } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { TimezoneOutboxEntity } from './timezone-outbox.entity.js';

/** The timezone-settings outbox: `settings.timezone.changed`, written with the change it announces. */
@Injectable()
export class TimezoneEventsOutbox extends OutboxRepository<TimezoneChangedEventDto> {
  constructor(dataSource: DataSource) {
    super(dataSource.getRepository(TimezoneOutboxEntity));
  }
}

/**
 * Publishes `settings.timezone.changed` from the timezone-settings outbox (stream SETTINGS):
 * right after a change commits, and by a sweep of leftovers. Consumers keep the latest
 * updated_at, so a repeat is harmless.
 */
@Injectable()
export class TimezoneEventsRelay extends OutboxRelay {
  constructor(nats: NatsClient, outbox: TimezoneEventsOutbox, @Inject(LOGGER) logger: Logger) {
    super(nats, outbox, logger, { name: 'settings', describes: 'settings.timezone.changed events' });
  }
}
