import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import type { Traffic } from '#libs/contracts';
import { RECOMMENDATIONS_SCHEMA } from '#libs/catalog-core';

/**
 * One answered question, keyed by platform, traffic, session and message: the row whose primary
 * key decides which of two identical requests records the answer. The user's words are not stored.
 */
@Entity({ schema: RECOMMENDATIONS_SCHEMA, name: 'recommendation_request' })
@Check('recommendation_request_traffic_check', `traffic IN ('live', 'test')`)
export class RecommendationRequestEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_request_pkey' })
  agent_id: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_request_pkey' })
  traffic: Traffic;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_request_pkey' })
  session_id: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_request_pkey' })
  message_id: string;

  @Column({ type: 'text' })
  request_id: string;

  @Column({ type: 'timestamptz' })
  created_at: Date;
}
