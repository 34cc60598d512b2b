import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryDeepPartialEntity, type Repository } from 'typeorm';
import { RecommendationEntity, RecommendationRequestEntity } from '#libs/catalog';
import type { OutboxEventRow } from '#libs/database';
import { EventSubjects, type RankedRecommendation, type RecommendationEventDto, type Traffic } from '#libs/contracts';
import type { AdCandidate } from '../ranking/ad-search.repository.js';
import { GeneratedEventsOutbox } from './generated-events.relay.js';

/** Who asked which message: the idempotency key of an answer. */
export interface AnswerKey {
  agent_id: string;
  traffic: Traffic;
  session_id: string;
  message_id: string;
}

/** An outbox row: an event written in the transaction of the recommendation it announces. */
export type PendingEvent = OutboxEventRow<RecommendationEventDto>;

export type AnswerOutcome =
  | { kind: 'none' }
  | { kind: 'recorded'; recommendations: RankedRecommendation[]; events: PendingEvent[] }
  /** Another request with the same key recorded its answer first: read and return that one. */
  | { kind: 'lost_race' };

export const GENERATED_SUBJECT = `${EventSubjects.recommendationPrefix}generated`;

/** `statement_timeout` of the writes that record an answer (the search has its own). */
const RECORD_TIMEOUT_MS = 5000;

type StoredRow = Pick<
  RecommendationEntity,
  'recommendation_id' | 'ad_id' | 'product_id' | 'product_title' | 'weave_summary' | 'tail_summary' | 'creative_input' | 'landing_url' | 'score' | 'created_at'
>;

/** `rec_` and 24 random hex digits (96 bits). */
export function newRecommendationId(): string {
  return `rec_${randomBytes(12).toString('hex')}`;
}

/** Deterministic, so a republish of the same event is deduplicated by JetStream (Nats-Msg-Id). */
export function generatedEventId(recommendationId: string): string {
  return `evt_gen_${recommendationId}`;
}

function view(row: StoredRow): RankedRecommendation {
  return {
    recommendation_id: row.recommendation_id,
    ad_id: row.ad_id,
    product_id: row.product_id,
    product_title: row.product_title,
    ...(row.weave_summary !== null ? { weave_summary: row.weave_summary } : {}),
    ...(row.tail_summary !== null ? { tail_summary: row.tail_summary } : {}),
    creative_input: row.creative_input,
    contextual_relevance_score: Number(row.score),
    landing_url: row.landing_url,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The recorded answers (schema recommendations, through its TypeORM entities). An answer is
 * recorded once per key: the request row's primary key decides which of two concurrent requests
 * records it (INSERT … ON CONFLICT DO NOTHING waits for the other transaction and then does
 * nothing), and the loser returns what the winner recorded. Empty answers are not recorded:
 * there is nothing to repeat.
 */
@Injectable()
export class RecommendationRepository {
  private readonly recommendations: Repository<RecommendationEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: GeneratedEventsOutbox,
  ) {
    this.recommendations = dataSource.getRepository(RecommendationEntity);
  }

  /** The answer recorded for a key, best first; empty when none was. */
  async findAnswer(key: AnswerKey): Promise<RankedRecommendation[]> {
    const rows = await this.recommendations.find({
      select: {
        recommendation_id: true,
        ad_id: true,
        product_id: true,
        product_title: true,
        weave_summary: true,
        tail_summary: true,
        creative_input: true,
        landing_url: true,
        score: true,
        created_at: true,
      },
      where: { agent_id: key.agent_id, traffic: key.traffic, session_id: key.session_id, message_id: key.message_id },
      order: { rank: 'ASC' },
    });
    return rows.map(view);
  }

  /**
   * In one transaction: `search` (under `statement_timeout` = searchTimeoutMs), then, when it
   * found ads, the request row, one row per recommendation and one `generated` event each in
   * the outbox. A search that runs out of time fails with PostgreSQL's query_canceled (57014).
   */
  async answerOnce(
    key: AnswerKey,
    meta: { request_id: string; searchTimeoutMs: number },
    search: (manager: EntityManager) => Promise<(AdCandidate & { score: number })[]>,
  ): Promise<AnswerOutcome> {
    return this.dataSource.transaction(async (manager) => {
      // Raw SQL: a transaction-local statement_timeout; TypeORM has no API for session settings.
      // No JIT: the search is a few index scans bounded by their LIMITs, far cheaper than compiling it.
      await manager.query(`SELECT set_config('statement_timeout', $1, true), set_config('jit', 'off', true)`, [`${meta.searchTimeoutMs}ms`]);
      const found = await search(manager);
      if (found.length === 0) return { kind: 'none' };
      await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${RECORD_TIMEOUT_MS}ms`]);

      const createdAt = new Date();
      const inserted = await manager
        .createQueryBuilder()
        .insert()
        .into(RecommendationRequestEntity)
        .values({ ...key, request_id: meta.request_id, created_at: createdAt })
        .orIgnore()
        .returning(['agent_id'])
        .updateEntity(false)
        .execute();
      if ((inserted.raw as unknown[]).length === 0) return { kind: 'lost_race' };

      const recommendations: RankedRecommendation[] = found.map((ad) =>
        view({ ...ad, recommendation_id: newRecommendationId(), score: ad.score, created_at: createdAt }),
      );
      const rows = recommendations.map((r, i) => ({
        ...key,
        recommendation_id: r.recommendation_id,
        rank: i + 1,
        ad_id: r.ad_id,
        product_id: r.product_id,
        product_title: r.product_title,
        weave_summary: r.weave_summary ?? null,
        tail_summary: r.tail_summary ?? null,
        creative_input: r.creative_input,
        landing_url: r.landing_url,
        score: r.contextual_relevance_score,
        created_at: createdAt,
      }));
      await manager
        .createQueryBuilder()
        .insert()
        .into(RecommendationEntity)
        // creative_input is any JSON object: TypeORM's deep-partial type cannot follow an open index signature.
        .values(rows as QueryDeepPartialEntity<RecommendationEntity>[])
        .updateEntity(false)
        .execute();

      const events: PendingEvent[] = recommendations.map((r) => {
        const eventId = generatedEventId(r.recommendation_id);
        return {
          event_id: eventId,
          subject: GENERATED_SUBJECT,
          payload: {
            event_id: eventId,
            recommendation_id: r.recommendation_id,
            agent_id: key.agent_id,
            traffic: key.traffic,
            recommendation_created_at: r.created_at,
            occurred_at: r.created_at,
            billable: false,
            ad_id: r.ad_id,
            product_id: r.product_id,
          },
        };
      });
      await this.outbox.add(manager, events);
      return { kind: 'recorded', recommendations, events };
    });
  }
}
