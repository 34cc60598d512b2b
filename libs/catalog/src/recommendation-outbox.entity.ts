import { Entity } from 'typeorm';
import { OutboxEventEntity } from '#libs/database';
import { RECOMMENDATIONS_SCHEMA } from './recommendations.schema.js';

/** The outbox of `events.recommendation.generated`, written with the answer it announces. */
@Entity({ schema: RECOMMENDATIONS_SCHEMA, name: 'outbox' })
export class RecommendationOutboxEntity extends OutboxEventEntity {}
