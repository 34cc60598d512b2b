import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LOGGER } from '#libs/bootstrap';
import { RecommendationOutboxEntity } from '#libs/catalog';
import type { RecommendationEventDto } from '#libs/contracts';
import { OutboxRepository } from '#libs/database';
import { NatsClient, OutboxRelay, type OutboxEvent } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { RecommendationRepository } from './recommendation.repository.js';

/** How long the relay gathers the events of answers committed meanwhile before publishing them together. */
export const RELAY_GATHER_MS = 20;
/** At most this many events per gathered batch. */
const RELAY_BATCH_EVENTS = 300;

/** The recommendations outbox: `events.recommendation.generated`, written with the answer it announces. */
@Injectable()
export class GeneratedEventsOutbox extends OutboxRepository<RecommendationEventDto> {
  constructor(
    dataSource: DataSource,
    private readonly records: RecommendationRepository,
  ) {
    super(dataSource.getRepository(RecommendationOutboxEntity), 500);
  }

  /** Deleted by the next answer's statement, or by one DELETE when none comes soon (RecommendationRepository.deletePublished). */
  override markPublished(eventIds: string[]): Promise<void> {
    return this.records.deletePublished(eventIds);
  }
}

/**
 * Publishes `events.recommendation.generated` from the recommendations outbox (stream EVENTS):
 * shortly after an answer commits, and by a sweep of leftovers. The events of the answers
 * committed within RELAY_GATHER_MS are published together, and their rows deleted by the next
 * answer's statement (GeneratedEventsOutbox.markPublished); events still gathered when the
 * process dies are in the outbox, for the sweep. The
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
