import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { RECOMMENDATIONS_SCHEMA, type RecommendationEntity } from '#libs/catalog';
import type { OutboxEventRow } from '#libs/database';
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

const SCHEMA = RECOMMENDATIONS_SCHEMA;

/** The columns of a recorded recommendation that an answer shows, in `view`'s order. */
const ANSWER_COLUMNS = 'recommendation_id, ad_id, product_id, product_title, weave_summary, tail_summary, creative_input, landing_url, score, created_at';

/**
 * Records an answer in one statement: the request row (ON CONFLICT DO NOTHING: of two concurrent
 * requests with the same key, the second waits for the first to commit and then inserts nothing),
 * and, only when that row was inserted, the recommendations ($7, a JSON array) and their
 * `generated` events in the outbox ($8). `recorded` is 1 when this request recorded the answer,
 * 0 when another one did first.
 */
const RECORD_ANSWER = `WITH request AS (
    INSERT INTO ${SCHEMA}.recommendation_request (agent_id, traffic, session_id, message_id, request_id, created_at)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), recommendations AS (
    INSERT INTO ${SCHEMA}.recommendation
      (recommendation_id, agent_id, traffic, session_id, message_id, rank, ad_id, product_id, product_title, weave_summary, tail_summary, creative_input, landing_url, score, created_at)
    SELECT r.recommendation_id, $1, $2, $3, $4, r.rank, r.ad_id, r.product_id, r.product_title, r.weave_summary, r.tail_summary, r.creative_input, r.landing_url, r.score, $6
      FROM request, jsonb_to_recordset($7::jsonb) AS r(recommendation_id text, rank smallint, ad_id text, product_id text, product_title text,
           weave_summary text, tail_summary text, creative_input jsonb, landing_url text, score numeric)
  ), events AS (
    INSERT INTO ${SCHEMA}.outbox (event_id, subject, payload)
    SELECT e.event_id, e.subject, e.payload FROM request, jsonb_to_recordset($8::jsonb) AS e(event_id text, subject text, payload jsonb)
    ON CONFLICT DO NOTHING
  )
  SELECT count(*)::int AS recorded FROM request`;

/**
 * The recorded answers (schema recommendations). An answer is recorded once per key: the request
 * row's primary key decides which of two concurrent requests records it, and the loser returns
 * what the winner recorded. Empty answers are not recorded: there is nothing to repeat.
 *
 * Raw SQL on the hot path (docs/decisions/recommend-hot-path-sql.md): TypeORM's query builders
 * and `find` spent more CPU building these statements than PostgreSQL spent running them, and
 * each statement is a round trip; the entities stay the schema's definition (migrations, ops).
 */
@Injectable()
export class RecommendationRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The answer recorded for a key, best first; empty when none was. */
  async findAnswer(key: AnswerKey): Promise<RankedRecommendation[]> {
    const rows: StoredRow[] = await this.dataSource.query(
      `SELECT ${ANSWER_COLUMNS} FROM ${SCHEMA}.recommendation
        WHERE agent_id = $1 AND traffic = $2 AND session_id = $3 AND message_id = $4
        ORDER BY rank`,
      [key.agent_id, key.traffic, key.session_id, key.message_id],
    );
    return rows.map(view);
  }

  /**
   * In one transaction: `search` (under `statement_timeout` = searchTimeoutMs), then, when it
   * found ads, the request row, one row per recommendation and one `generated` event each in
   * the outbox (one statement). A search that runs out of time fails with PostgreSQL's
   * query_canceled (57014).
   */
  async answerOnce(
    key: AnswerKey,
    meta: { request_id: string; searchTimeoutMs: number },
    search: (manager: EntityManager) => Promise<(AdCandidate & { score: number })[]>,
  ): Promise<AnswerOutcome> {
    return this.dataSource.transaction(async (manager) => {
      // A transaction-local statement_timeout; TypeORM has no API for session settings.
      // No JIT: the search is a few index scans bounded by their LIMITs, far cheaper than compiling it.
      await manager.query(`SELECT set_config('statement_timeout', $1, true), set_config('jit', 'off', true)`, [`${meta.searchTimeoutMs}ms`]);
      const found = await search(manager);
      if (found.length === 0) return { kind: 'none' };
      await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${RECORD_TIMEOUT_MS}ms`]);

      const createdAt = new Date();
      const recommendations: RankedRecommendation[] = found.map((ad) =>
        view({ ...ad, recommendation_id: newRecommendationId(), score: ad.score, created_at: createdAt }),
      );
      const rows = recommendations.map((r, i) => ({
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
      }));
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
      const [{ recorded }]: { recorded: number }[] = await manager.query(RECORD_ANSWER, [
        key.agent_id,
        key.traffic,
        key.session_id,
        key.message_id,
        meta.request_id,
        createdAt,
        JSON.stringify(rows),
        JSON.stringify(events),
      ]);
      if (recorded === 0) return { kind: 'lost_race' };
      return { kind: 'recorded', recommendations, events };
    });
  }
}
