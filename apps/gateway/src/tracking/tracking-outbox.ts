import { Injectable } from '@nestjs/common';
import { OutboxRepositoryOf } from '#libs/database';
import { GatewayOutboxEntity } from '#libs/identity';
import { OutboxRelayOf } from '#libs/nats';
import type { TrackingEvent } from './tracking-events.js';

/**
 * The gateway's outbox (identity.outbox): a tracking event whose JetStream publish failed is
 * written here, so its link still answers 204 / 302, and TrackingEventsRelay publishes it later.
 */
@Injectable()
export class TrackingOutbox extends OutboxRepositoryOf<TrackingEvent>(GatewayOutboxEntity) {}

/**
 * Publishes the tracking events left in the gateway's outbox (stream EVENTS, Nats-Msg-Id =
 * event_id) at start and every few seconds until JetStream acknowledges them; the projection
 * absorbs a repeat.
 */
@Injectable()
export class TrackingEventsRelay extends OutboxRelayOf(TrackingOutbox, { name: 'tracking', describes: 'Tracking events kept in the outbox after a failed publish' }) {}
