import { Column, PrimaryColumn } from 'typeorm';

/**
 * The columns of a transactional outbox table: an event written in the same transaction as the
 * change it announces, deleted once JetStream acknowledged it. Each service that has an outbox
 * declares its own entity on its own schema by extending this class.
 */
export abstract class OutboxEventEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'outbox_pkey' })
  event_id: string;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'jsonb' })
  payload: object;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created_at: Date;
}

/** An outbox row as written and as relayed (created_at is the database's). */
export interface OutboxEventRow<Payload extends object = object> {
  event_id: string;
  subject: string;
  payload: Payload;
}

