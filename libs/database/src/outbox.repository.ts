import { In, type EntityManager, type EntityTarget, type Repository } from 'typeorm';
import type { OutboxEventEntity, OutboxEventRow } from './outbox-event.entity.js';

/**
 * Reads and clears one outbox table (the store an OutboxRelay publishes from); `add` writes
 * events inside the caller's transaction, next to the change they announce.
 */
export class OutboxRepository<Payload> {
  constructor(
    private readonly target: EntityTarget<OutboxEventEntity<Payload>>,
    private readonly events: Repository<OutboxEventEntity<Payload>>,
  ) {}

  async add(manager: EntityManager, events: OutboxEventRow<Payload>[]): Promise<void> {
    if (events.length === 0) return;
    await manager.createQueryBuilder().insert().into(this.target).values(events as never[]).updateEntity(false).execute();
  }

  /** Rows written at least `olderThanMs` ago by the database's clock, oldest first. */
  pendingEvents(olderThanMs: number, limit: number): Promise<OutboxEventRow<Payload>[]> {
    return this.events
      .createQueryBuilder('outbox')
      .select(['outbox.event_id', 'outbox.subject', 'outbox.payload'])
      .where(`outbox.created_at <= now() - (:olderThanMs::int * interval '1 millisecond')`, { olderThanMs })
      .orderBy('outbox.created_at')
      .addOrderBy('outbox.event_id')
      .limit(limit)
      .getMany();
  }

  async markPublished(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.events.delete({ event_id: In(eventIds) } as never);
  }
}
