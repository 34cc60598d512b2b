import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LOGGER } from '#libs/bootstrap';
import { OutboxRepository } from '#libs/database';
import { GatewayOutboxEntity } from '#libs/identity';
import { NatsClient, OutboxRelay } from '#libs/nats';
import type { Logger } from '#libs/observability';
import type { TrackingEvent } from './tracking-events.js';

/**
 * The gateway's outbox (identity.outbox): a tracking event whose JetStream publish failed is
 * written here, so its link still answers 204 / 302, and TrackingEventsRelay publishes it later.
 */
@Injectable()
export class TrackingOutbox extends OutboxRepository<TrackingEvent> {
  constructor(dataSource: DataSource) {
    super(dataSource.getRepository(GatewayOutboxEntity));
  }
}

/**
 * Publishes the tracking events left in the gateway's outbox (stream EVENTS, Nats-Msg-Id =
 * event_id) at start and every few seconds until JetStream acknowledges them; the projection
 * absorbs a repeat.
 */
@Injectable()
export class TrackingEventsRelay extends OutboxRelay {
  constructor(nats: NatsClient, outbox: TrackingOutbox, @Inject(LOGGER) logger: Logger) {
    super(nats, outbox, logger, { name: 'tracking', describes: 'Tracking events kept in the outbox after a failed publish' });
  }
}
