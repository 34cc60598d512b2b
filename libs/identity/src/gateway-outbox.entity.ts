import { Entity } from 'typeorm';
import { OutboxEventEntity } from '#libs/database';
import { IDENTITY_SCHEMA } from './platform.entity.js';

/**
 * The gateway's outbox (migration 1795750000000): tracking events whose JetStream publish
 * failed, kept until the gateway's relay publishes them.
 */
@Entity({ schema: IDENTITY_SCHEMA, name: 'outbox' })
export class GatewayOutboxEntity extends OutboxEventEntity {}
