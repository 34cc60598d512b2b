import { Entity } from 'typeorm';
import { OutboxEventEntity } from '#libs/database';
import { RECOMMENDATIONS_SCHEMA } from '#libs/catalog-core';

/** The outbox of `events.recommendation.generated`, written with the answer it announces. */
@Entity({ schema: RECOMMENDATIONS_SCHEMA, name: 'outbox' })
export class RecommendationOutboxEntity extends OutboxEventEntity {}
