import { Entity } from 'typeorm';
import { OutboxEventEntity } from '#libs/database';
import { TIMEZONE_SETTINGS_SCHEMA } from './platform-timezone.entity.js';

/** The outbox of `settings.timezone.changed` (migration 1764288000000). */
@Entity({ schema: TIMEZONE_SETTINGS_SCHEMA, name: 'outbox' })
export class TimezoneOutboxEntity extends OutboxEventEntity {}
