import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import type { Traffic } from '#libs/contracts';
import { AdContentColumns } from './ad-content.entity.js';
import { RecommendationRequestEntity } from './recommendation-request.entity.js';
import { RECOMMENDATIONS_SCHEMA } from '#libs/catalog-core';

/**
 * One recommendation of a recorded answer, at its rank. It keeps what was answered (title,
 * summaries, creative, landing URL), so a later catalog change does not alter a replay.
 */
@Entity({ schema: RECOMMENDATIONS_SCHEMA, name: 'recommendation' })
@Check('recommendation_rank_check', 'rank >= 1')
@Check('recommendation_score_check', 'score >= 0 AND score <= 100')
@Unique('recommendation_agent_id_traffic_session_id_message_id_rank_key', ['agent_id', 'traffic', 'session_id', 'message_id', 'rank'])
export class RecommendationEntity extends AdContentColumns {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'recommendation_pkey' })
  recommendation_id: string;

  @Column({ type: 'text' })
  agent_id: string;

  @Column({ type: 'text' })
  traffic: Traffic;

  @Column({ type: 'text' })
  session_id: string;

  @Column({ type: 'text' })
  message_id: string;

  @ManyToOne(() => RecommendationRequestEntity, { nullable: false })
  @JoinColumn([
    { name: 'agent_id', referencedColumnName: 'agent_id', foreignKeyConstraintName: 'recommendation_agent_id_traffic_session_id_message_id_fkey' },
    { name: 'traffic', referencedColumnName: 'traffic' },
    { name: 'session_id', referencedColumnName: 'session_id' },
    { name: 'message_id', referencedColumnName: 'message_id' },
  ])
  request?: RecommendationRequestEntity;

  @Column({ type: 'smallint' })
  rank: number;

  @Column({ type: 'text' })
  ad_id: string;

  /** 0–100 with one decimal; PostgreSQL's numeric comes back as a string. */
  @Column({ type: 'numeric', precision: 4, scale: 1 })
  score: string | number;

  @Column({ type: 'timestamptz' })
  created_at: Date;
}
