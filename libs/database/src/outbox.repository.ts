import { In, type EntityManager, type Repository } from 'typeorm';
import type { OutboxEventEntity, OutboxEventRow } from './outbox-event.entity.js';

/**
 * One outbox table: `add` writes events inside the caller's transaction, next to the change
 * they announce; `pendingEvents` and `markPublished` are the store an OutboxRelay publishes
 * from and clears.
 */
export class OutboxRepository<Payload extends object> {
  constructor(private readonly events: Repository<OutboxEventEntity>) {}

  async add(manager: EntityManager, events: OutboxEventRow<Payload>[]): Promise<void> {
    if (events.length === 0) return;
    await manager.createQueryBuilder().insert().into(this.events.target).values(events).updateEntity(false).execute();
  }

  /** Rows written at least `olderThanMs` ago by the database's clock, oldest first. */
  async pendingEvents(olderThanMs: number, limit: number): Promise<OutboxEventRow<Payload>[]> {
    const rows = await this.events
      .createQueryBuilder('outbox')
      .select(['outbox.event_id', 'outbox.subject', 'outbox.payload'])
      .where(`outbox.created_at <= now() - (:olderThanMs::int * interval '1 millisecond')`, { olderThanMs })
      .orderBy('outbox.created_at')
      .addOrderBy('outbox.event_id')
      .limit(limit)
      .getMany();
    // The payload is the jsonb this repository's `add` wrote.
    return rows.map(({ event_id, subject, payload }) => ({ event_id, subject, payload: payload as Payload }));
  }

  async markPublished(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.events.createQueryBuilder().delete().where({ event_id: In(eventIds) }).execute();
  }
}
