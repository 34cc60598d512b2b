import { outboxTableMigration } from '#libs/database';

/**
 * The gateway's outbox: a tracking event (events.recommendation.shown/clicked) whose JetStream
 * publish failed is written here, so the link still answers 204 / 302 (DESIGN §5) and the
 * gateway's relay publishes the event once JetStream acknowledges again.
 */
export const IdentityOutbox1795750000000 = outboxTableMigration('IdentityOutbox1795750000000', 'identity');
