import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { Traffic } from '#libs/contracts';
import { AdContentColumns } from './ad-content.entity.js';
import { RecommendationRequestEntity } from './recommendation-request.entity.js';
import { RECOMMENDATIONS_SCHEMA } from '#libs/catalog-core';

/**
 * One recommendation of a recorded answer, at its rank. It keeps what was answered (title,
 * summaries, creative, landing URL), so a later catalog change does not alter a replay. Keyed by
 * the answer's key and the rank (what a replay reads); `recommendation_id` is drawn at random by
 * the service (96 bits) and not indexed. No foreign key to its request: the answer's statement
 * writes these rows only from the request row it inserted (migration 1764806400000).
 */
@Entity({ schema: RECOMMENDATIONS_SCHEMA, name: 'recommendation' })
@Check('recommendation_rank_check', 'rank >= 1')
@Check('recommendation_score_check', 'score >= 0 AND score <= 100')
export class RecommendationEntity extends AdContentColumns {
  @Column({ type: 'text' })
  recommendation_id: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_pkey' })
  agent_id: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_pkey' })
  traffic: Traffic;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_pkey' })
  session_id: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_pkey' })
  message_id: string;

  @ManyToOne(() => RecommendationRequestEntity, { nullable: false, createForeignKeyConstraints: false })
  @JoinColumn([
    { name: 'agent_id', referencedColumnName: 'agent_id' },
    { name: 'traffic', referencedColumnName: 'traffic' },
    { name: 'session_id', referencedColumnName: 'session_id' },
    { name: 'message_id', referencedColumnName: 'message_id' },
  ])
  request?: RecommendationRequestEntity;

  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'recommendation_pkey' })
  rank: number;

  @Column({ type: 'text' })
  ad_id: string;

  /** 0–100 with one decimal; PostgreSQL's numeric comes back as a string. */
  @Column({ type: 'numeric', precision: 4, scale: 1 })
  score: string | number;

  @Column({ type: 'timestamptz' })
  created_at: Date;
}
