import { Injectable, type Type } from '@nestjs/common';
import { DataSource, In, type EntityManager, type EntityTarget, type Repository } from 'typeorm';
import type { OutboxEventEntity, OutboxEventRow } from './outbox-event.entity.js';

/**
 * One outbox table: `add` writes events inside the caller's transaction, next to the change
 * they announce (`write` on their own, when there is no other change); `pendingEvents` and
 * `markPublished` are the store an OutboxRelay publishes from and clears. An event id already
 * in the table is the same event and is not written again.
 */
export class OutboxRepository<Payload extends object> {
  constructor(
    private readonly events: Repository<OutboxEventEntity>,
    /** How many rows pendingEvents returns at most (a relay's page). */
    private readonly pageSize = 100,
  ) {}

  async add(manager: EntityManager, events: OutboxEventRow<Payload>[]): Promise<void> {
    if (events.length === 0) return;
    await manager.createQueryBuilder().insert().into(this.events.target).values(events).orIgnore().updateEntity(false).execute();
  }

  /** Writes events outside any other transaction. */
  write(events: OutboxEventRow<Payload>[]): Promise<void> {
    return this.add(this.events.manager, events);
  }

  /** Rows written at least `olderThanMs` ago by the database's clock, oldest first. */
  async pendingEvents(olderThanMs: number, limit = this.pageSize): Promise<OutboxEventRow<Payload>[]> {
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

/** The injectable outbox of one table (an entity of OutboxEventEntity's columns) of the application's DataSource. */
export function OutboxRepositoryOf<Payload extends object>(entity: EntityTarget<OutboxEventEntity>): Type<OutboxRepository<Payload>> {
  @Injectable()
  class Outbox extends OutboxRepository<Payload> {
    constructor(dataSource: DataSource) {
      super(dataSource.getRepository(entity));
    }
  }
  return Outbox;
}
