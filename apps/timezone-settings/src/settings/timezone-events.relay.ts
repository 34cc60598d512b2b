import { Injectable } from '@nestjs/common';
import type { TimezoneChangedEventDto } from '#libs/contracts';
import { OutboxRepositoryOf } from '#libs/database';
import { OutboxRelayOf } from '#libs/nats';
import { TimezoneOutboxEntity } from './timezone-outbox.entity.js';

/** The timezone-settings outbox: `settings.timezone.changed`, written with the change it announces. */
@Injectable()
export class TimezoneEventsOutbox extends OutboxRepositoryOf<TimezoneChangedEventDto>(TimezoneOutboxEntity) {}

/**
 * Publishes `settings.timezone.changed` from the timezone-settings outbox (stream SETTINGS):
 * right after a change commits, and by a sweep of leftovers. Consumers keep the latest
 * updated_at, so a repeat is harmless.
 */
@Injectable()
export class TimezoneEventsRelay extends OutboxRelayOf(TimezoneEventsOutbox, { name: 'settings', describes: 'settings.timezone.changed events' }) {}
