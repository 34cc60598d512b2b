import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { LOGGER } from '#libs/bootstrap';
import { RECOMMENDATIONS_SCHEMA, RecommendationOutboxEntity } from '#libs/catalog';
import type { RecommendationEventDto } from '#libs/contracts';
import { OutboxRepository } from '#libs/database';
import { NatsClient, OutboxRelay, type OutboxEvent } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { quoteLiteral } from './recommendation.repository.js';

/** How long the relay gathers the events of answers committed meanwhile before publishing them together. */
export const RELAY_GATHER_MS = 20;
/** At most this many events per gathered batch (one DELETE of their rows). */
const RELAY_BATCH_EVENTS = 300;

/**
 * The rows of published events deleted in one message, its commit not waiting for the WAL flush
 * (`synchronous_commit = off` for this transaction only): a delete lost to a PostgreSQL crash
 * leaves rows whose events the sweep publishes again (JetStream drops the repeat by its
 * Nats-Msg-Id, the projection absorbs one after the window), so its durability buys nothing and
 * the flush was a disk wait per batch.
 */
export function deletePublished(eventIds: string[]): string {
  const array = `{${eventIds.map((id) => `"${id.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
  return `SET LOCAL synchronous_commit = off; DELETE FROM ${RECOMMENDATIONS_SCHEMA}.outbox WHERE event_id = ANY(${quoteLiteral(array)}::text[])`;
}

/** The recommendations outbox: `events.recommendation.generated`, written with the answer it announces. */
@Injectable()
export class GeneratedEventsOutbox extends OutboxRepository<RecommendationEventDto> {
  constructor(private readonly dataSource: DataSource) {
    super(dataSource.getRepository(RecommendationOutboxEntity), 500);
  }

  /** One DELETE for a whole batch, on the DataSource's pg pool (no query builder or runner on the hot path). */
  override async markPublished(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await (this.dataSource.driver as unknown as { master: pg.Pool }).master.query(deletePublished(eventIds));
  }
}

/**
 * Publishes `events.recommendation.generated` from the recommendations outbox (stream EVENTS):
 * shortly after an answer commits, and by a sweep of leftovers. The events of the answers
 * committed within RELAY_GATHER_MS are published together and their rows deleted by one
 * statement; events still gathered when the process dies are in the outbox, for the sweep. The
 * reporting projection is idempotent, so a repeat after JetStream's duplicate window is harmless.
 */
@Injectable()
export class GeneratedEventsRelay extends OutboxRelay {
  private gathered: OutboxEvent[] = [];
  private gatherTimer?: NodeJS.Timeout;

  constructor(nats: NatsClient, outbox: GeneratedEventsOutbox, @Inject(LOGGER) logger: Logger) {
    super(nats, outbox, logger, { name: 'recommendations', describes: 'events.recommendation.generated' });
  }

  override publishSoon(events: OutboxEvent[]): void {
    for (const event of events) this.gathered.push(event);
    if (this.gathered.length >= RELAY_BATCH_EVENTS) this.flush();
    else this.gatherTimer ??= setTimeout(() => this.flush(), RELAY_GATHER_MS);
  }

  override async stop(): Promise<void> {
    this.flush();
    await super.stop();
  }

  private flush(): void {
    clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    if (this.gathered.length === 0) return;
    const batch = this.gathered;
    this.gathered = [];
    super.publishSoon(batch);
  }
}
