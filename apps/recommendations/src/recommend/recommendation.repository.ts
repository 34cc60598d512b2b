import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { EventSubjects, type RankedRecommendation, type RecommendationEventDto, type Traffic } from '#libs/contracts';
import type { AdCandidate } from '../ranking/ad-search.repository.js';

/** Who asked which message: the idempotency key of an answer. */
export interface AnswerKey {
  agent_id: string;
  traffic: Traffic;
  session_id: string;
  message_id: string;
}

/** An outbox row: an event written in the transaction of the recommendation it announces. */
export interface PendingEvent {
  event_id: string;
  subject: string;
  payload: RecommendationEventDto;
}

export type AnswerOutcome =
  | { kind: 'none' }
  | { kind: 'recorded'; recommendations: RankedRecommendation[]; events: PendingEvent[] }
  /** Another request with the same key recorded its answer first: read and return that one. */
  | { kind: 'lost_race' };

export const GENERATED_SUBJECT = `${EventSubjects.recommendationPrefix}generated`;

/** `statement_timeout` of the writes that record an answer (the search has its own). */
const RECORD_TIMEOUT_MS = 5000;

interface StoredRow {
  recommendation_id: string;
  ad_id: string;
  product_id: string;
  product_title: string;
  weave_summary: string | null;
  tail_summary: string | null;
  creative_input: RankedRecommendation['creative_input'];
  landing_url: string;
  score: string | number;
  created_at: Date;
}

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
 * The recorded answers (schema recommendations). An answer is recorded once per key: the
 * request row's primary key decides which of two concurrent requests records it (INSERT … ON
 * CONFLICT DO NOTHING waits for the other transaction and then does nothing), and the loser
 * returns what the winner recorded. Empty answers are not recorded: there is nothing to repeat.
 */
@Injectable()
export class RecommendationRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The answer recorded for a key, best first; empty when none was. */
  async findAnswer(key: AnswerKey): Promise<RankedRecommendation[]> {
    const rows: StoredRow[] = await this.dataSource.query(
      `SELECT recommendation_id, ad_id, product_id, product_title, weave_summary, tail_summary, creative_input, landing_url, score, created_at
         FROM recommendations.recommendation
        WHERE agent_id = $1 AND traffic = $2 AND session_id = $3 AND message_id = $4
        ORDER BY rank`,
      [key.agent_id, key.traffic, key.session_id, key.message_id],
    );
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
      await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${meta.searchTimeoutMs}ms`]);
      const found = await search(manager);
      if (found.length === 0) return { kind: 'none' };
      await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${RECORD_TIMEOUT_MS}ms`]);

      const createdAt = new Date();
      const inserted: unknown[] = await manager.query(
        `INSERT INTO recommendations.recommendation_request (agent_id, traffic, session_id, message_id, request_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING
         RETURNING 1`,
        [key.agent_id, key.traffic, key.session_id, key.message_id, meta.request_id, createdAt],
      );
      if (inserted.length === 0) return { kind: 'lost_race' };

      const recommendations: RankedRecommendation[] = found.map((ad) =>
        view({ ...ad, recommendation_id: newRecommendationId(), score: ad.score, created_at: createdAt }),
      );
      await manager.query(
        `INSERT INTO recommendations.recommendation
           (recommendation_id, agent_id, traffic, session_id, message_id, rank, ad_id, product_id, product_title,
            weave_summary, tail_summary, creative_input, landing_url, score, created_at)
         SELECT r.recommendation_id, $1, $2, $3, $4, r.rank, r.ad_id, r.product_id, r.product_title,
                r.weave_summary, r.tail_summary, r.creative_input, r.landing_url, r.score, $5
           FROM jsonb_to_recordset($6::jsonb) AS r(recommendation_id text, rank smallint, ad_id text, product_id text, product_title text,
                                                   weave_summary text, tail_summary text, creative_input jsonb, landing_url text, score numeric)`,
        [
          key.agent_id,
          key.traffic,
          key.session_id,
          key.message_id,
          createdAt,
          JSON.stringify(
            recommendations.map((r, i) => ({
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
            })),
          ),
        ],
      );

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
      await manager.query(
        `INSERT INTO recommendations.outbox (event_id, subject, payload)
         SELECT e.event_id, e.subject, e.payload FROM jsonb_to_recordset($1::jsonb) AS e(event_id text, subject text, payload jsonb)`,
        [JSON.stringify(events)],
      );
      return { kind: 'recorded', recommendations, events };
    });
  }

  /** Outbox rows older than `olderThanMs` (the relay's sweep), oldest first. */
  async pendingEvents(olderThanMs: number, limit = 500): Promise<PendingEvent[]> {
    return this.dataSource.query(
      `SELECT event_id, subject, payload FROM recommendations.outbox
        WHERE created_at <= now() - ($1::int * interval '1 millisecond')
        ORDER BY created_at, event_id LIMIT $2`,
      [olderThanMs, limit],
    );
  }

  async markPublished(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.dataSource.query(`DELETE FROM recommendations.outbox WHERE event_id = ANY($1::text[])`, [eventIds]);
  }
}
