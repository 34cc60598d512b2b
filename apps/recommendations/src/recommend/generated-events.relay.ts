import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LOGGER } from '#libs/bootstrap';
import { RecommendationOutboxEntity } from '#libs/catalog';
import type { RecommendationEventDto } from '#libs/contracts';
import { OutboxRepository } from '#libs/database';
import { NatsClient, OutboxRelay } from '#libs/nats';
import type { Logger } from '#libs/observability';

/** The recommendations outbox: `events.recommendation.generated`, written with the answer it announces. */
@Injectable()
export class GeneratedEventsOutbox extends OutboxRepository<RecommendationEventDto> {
  constructor(dataSource: DataSource) {
    super(dataSource.getRepository(RecommendationOutboxEntity), 500);
  }
}

/**
 * Publishes `events.recommendation.generated` from the recommendations outbox (stream EVENTS):
 * right after an answer commits, and by a sweep of leftovers. The reporting projection is
 * idempotent, so a repeat after JetStream's duplicate window is harmless.
 */
@Injectable()
export class GeneratedEventsRelay extends OutboxRelay {
  constructor(nats: NatsClient, outbox: GeneratedEventsOutbox, @Inject(LOGGER) logger: Logger) {
    super(nats, outbox, logger, { name: 'recommendations', describes: 'events.recommendation.generated' });
  }
}
