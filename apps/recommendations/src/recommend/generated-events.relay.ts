import { Inject, Injectable } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { NatsClient, OutboxRelay } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { RecommendationRepository } from './recommendation.repository.js';

/**
 * Publishes `events.recommendation.generated` from the recommendations outbox (stream EVENTS):
 * right after an answer commits, and by a sweep of leftovers. The reporting projection is
 * idempotent, so a repeat after JetStream's duplicate window is harmless.
 */
@Injectable()
export class GeneratedEventsRelay extends OutboxRelay {
  constructor(nats: NatsClient, records: RecommendationRepository, @Inject(LOGGER) logger: Logger) {
    super(nats, records, logger, { name: 'recommendations', describes: 'events.recommendation.generated' });
  }
}
