import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { RECOMMENDATIONS_SCHEMA, type RecommendationEntity } from '#libs/catalog';
import type { OutboxEventRow } from '#libs/database';
import { EventSubjects, type RankedRecommendation, type RecommendationEventDto, type Traffic } from '#libs/contracts';
import { searchStatement, type AdCandidate } from '../ranking/ad-search.repository.js';

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
  | { kind: 'recorded'; recommendations: RankedRecommendation[]; events: PendingEvent[] }
  /** Another request with the same key recorded its answer first: read and return that one. */
  | { kind: 'lost_race' };

/** What the first statement of an answer found: the answer recorded for the key, or the search's candidates. */
export type FirstLook = { kind: 'replay'; recommendations: RankedRecommendation[] } | { kind: 'search'; candidates: AdCandidate[] };

/** A text a statement cannot carry: PostgreSQL stores no NUL character (the caller answers invalid_request). */
export class UnstorableText extends Error {
  constructor(readonly field: string) {
    super(`${field} holds a NUL character (\\u0000), which cannot be stored`);
  }
}

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
 * A quoted SQL literal, as pg's escapeLiteral (libpq's escaping) writes it: quotes doubled, and
 * backslashes doubled in an E'' string. Native string searches rather than its loop over each
 * character, which cost about a millisecond per answer on the JSON arrays of the recording.
 */
export function quoteLiteral(value: string): string {
  const quoted = value.includes("'") ? value.replaceAll("'", "''") : value;
  return quoted.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** A quoted SQL literal; a NUL cannot be carried by a statement. */
function literal(value: string, field: string): string {
  if (value.includes('\u0000')) throw new UnstorableText(field);
  return quoteLiteral(value);
}

/** Search text: a NUL separates words like a space does (to_tsvector sees no word in it). */
const searchText = (value: string) => quoteLiteral(value.includes('\u0000') ? value.replaceAll('\u0000', ' ') : value);

function keyCondition(key: AnswerKey): string {
  return (
    `agent_id = ${literal(key.agent_id, 'agent_id')} AND traffic = ${literal(key.traffic, 'traffic')} ` +
    `AND session_id = ${literal(key.session_id, 'session_id')} AND message_id = ${literal(key.message_id, 'message_id')}`
  );
}

/** The four values of a key as EXECUTE arguments, in the order of the prepared statements' $1–$4. */
const keyArguments = (key: AnswerKey) =>
  `${literal(key.agent_id, 'agent_id')}, ${literal(key.traffic, 'traffic')}, ${literal(key.session_id, 'session_id')}, ${literal(key.message_id, 'message_id')}`;

/**
 * feature_not_supported: what EXECUTE answers when a migration changed the result columns of a
 * prepared statement ("cached plan must not change result type"); its connection is closed, and
 * the next one prepares the statements anew.
 */
const STALE_PREPARED = '0A000';

/** Names of the two prepared statements of an answer, on every pooled connection that served one. */
const FIRST_LOOK = 'recommend_first_look';
const RECORD = 'recommend_record';

/**
 * Records an answer in one statement: the request row (ON CONFLICT DO NOTHING: of two concurrent
 * requests with the same key, the second waits for the first to commit and then inserts nothing),
 * and, only when that row was inserted, the recommendations (a JSON array) and their `generated`
 * events in the outbox (another). `recorded` is 1 when this request recorded the answer, 0 when
 * another one did first. Parameters: the key ($1–$4), the request id, created_at, the two arrays.
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
      FROM request, jsonb_to_recordset($7) AS r(recommendation_id text, rank smallint, ad_id text, product_id text, product_title text,
           weave_summary text, tail_summary text, creative_input jsonb, landing_url text, score numeric)
  ), events AS (
    INSERT INTO ${SCHEMA}.outbox (event_id, subject, payload)
    SELECT e.event_id, e.subject, e.payload FROM request, jsonb_to_recordset($8) AS e(event_id text, subject text, payload jsonb)
    ON CONFLICT DO NOTHING
  )
  SELECT count(*)::int AS recorded FROM request`;

type FirstLookRow = StoredRow & { recorded: boolean; strength: number | string | null };

/**
 * The answers recorded for the key ($1–$4), or, only when there is none, the search (query $5,
 * context $6, context weight $7, limit $8): one statement (the search's branch is gated by a
 * one-time filter, never run on a replay). Recorded rows come with `recorded` true and their rank
 * order; search rows with their strength, best first.
 */
const REPLAY_OR_SEARCH = `WITH recorded AS (
    SELECT ${ANSWER_COLUMNS}, rank FROM ${SCHEMA}.recommendation WHERE agent_id = $1 AND traffic = $2 AND session_id = $3 AND message_id = $4
  )
  SELECT true AS recorded, ${ANSWER_COLUMNS}, NULL::float8 AS strength, rank FROM recorded
  UNION ALL
  SELECT false, NULL, f.ad_id, f.product_id, f.product_title, f.weave_summary, f.tail_summary, f.creative_input, f.landing_url, NULL, NULL, f.strength, NULL
    FROM (${searchStatement({ query: '$5', context: '$6', contextWeight: '$7', limit: '$8' })}) f
   WHERE NOT EXISTS (SELECT 1 FROM recorded)
  ORDER BY 1 DESC, rank, strength DESC, ad_id`;

/**
 * Both statements prepared (SQL PREPARE: parsed and analysed once per connection; planned at
 * their first EXECUTE and, under plan_cache_mode = force_generic_plan, never again).
 */
export const PREPARE_STATEMENTS =
  `PREPARE ${FIRST_LOOK} (text, text, text, text, text, text, float8, int) AS ${REPLAY_OR_SEARCH}; ` +
  `PREPARE ${RECORD} (text, text, text, text, text, timestamptz, jsonb, jsonb) AS ${RECORD_ANSWER}`;

/**
 * The settings of an answer's statements, for the implicit transaction of their message only:
 * `statement_timeout` (applied to each statement of the message apart), the cached generic plan
 * rather than a plan per EXECUTE (the same plan: the statements' shape does not depend on the
 * values), and no JIT (the search is a few index scans bounded by their LIMITs, far cheaper than
 * compiling it).
 */
const settings = (timeoutMs: number) =>
  `SET LOCAL statement_timeout = ${timeout(timeoutMs)}; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL jit = off; `;

/** The first look of an answer: EXECUTE with its values as literals. */
function replayOrSearch(key: AnswerKey, search: { query: string; context: string; contextWeight: number; limit: number }): string {
  const weight = Number(search.contextWeight);
  if (!Number.isFinite(weight) || !Number.isSafeInteger(search.limit)) throw new TypeError('contextWeight and limit must be numbers');
  return `EXECUTE ${FIRST_LOOK}(${keyArguments(key)}, ${searchText(search.query)}, ${searchText(search.context)}, ${weight}, ${search.limit})`;
}

/** The recording of an answer: EXECUTE with its values as literals. */
function recordAnswer(key: AnswerKey, requestId: string, createdAt: string, recommendations: string, events: string): string {
  return (
    `EXECUTE ${RECORD}(${keyArguments(key)}, ${literal(requestId, 'request_id')}, ${quoteLiteral(createdAt)}, ` +
    `${literal(recommendations, 'recommendations')}, ${literal(events, 'events')})`
  );
}

/** Seconds of `statement_timeout` as a SET LOCAL value (whole milliseconds, at least 1). */
const timeout = (ms: number) => `'${Math.max(1, Math.ceil(ms))}ms'`;

/**
 * The recorded answers (schema recommendations). An answer is recorded once per key: the request
 * row's primary key decides which of two concurrent requests records it, and the loser returns
 * what the winner recorded. Empty answers are not recorded: there is nothing to repeat.
 *
 * The hot path is two round trips to PostgreSQL, each one simple-protocol message run as one
 * implicit transaction: `SET LOCAL` of the budget (statement_timeout), the generic plan and no
 * JIT, then an EXECUTE of a prepared statement: the replay lookup folded with the search; the
 * recording. Each pooled connection prepares both once (its first answer's message carries the
 * PREPAREs), so PostgreSQL neither parses nor plans them per answer. Raw SQL on the pg pool
 * (docs/decisions/recommend-hot-path-sql.md): TypeORM's query builders, `find` and its
 * transaction wrapper spent more CPU than PostgreSQL spent running these statements. The EXECUTE
 * arguments are quoted literals (pg's escaping; a NUL is refused): a simple-protocol message has
 * no parameters, and it is what lets `SET LOCAL statement_timeout` travel with the statement.
 * The entities stay the schema's definition (migrations, ops).
 */
@Injectable()
export class RecommendationRepository {
  private pool?: pg.Pool;

  constructor(private readonly dataSource: DataSource) {}

  /** The DataSource's own pg pool (TypeORM's PostgresDriver keeps it as `master`). */
  private get db(): pg.Pool {
    this.pool ??= (this.dataSource.driver as unknown as { master: pg.Pool }).master;
    return this.pool;
  }

  /** The pooled connections whose session holds both prepared statements. */
  private readonly prepared = new WeakSet<pg.PoolClient>();

  /**
   * One simple-protocol message on a pooled connection. A statement's error (a search over
   * time: query_canceled) leaves the connection usable (the message's implicit transaction
   * ended with it), so the connection goes back to the pool; `pool.query` would close it, and
   * under overload every late search would cost a new connection.
   *
   * With `execute`, the message runs `settings` then an EXECUTE of a prepared statement; on a
   * connection that has not prepared them yet, the PREPAREs go in the same message, after the
   * settings (so its statement_timeout bounds them too). A prepared statement outlives the
   * transaction that made it, even when a later statement of the message fails: a connection
   * whose preparing message failed is closed rather than reused with a half-known session.
   */
  private async send<R extends pg.QueryResultRow>(text: string, execute?: { settings: string }): Promise<pg.QueryResult<R>[]> {
    const client = await this.db.connect();
    let broken: Error | undefined;
    const preparing = execute !== undefined && !this.prepared.has(client);
    try {
      const message = execute === undefined ? text : `${execute.settings}${preparing ? `${PREPARE_STATEMENTS}; ` : ''}${text}`;
      const result = (await client.query<R>(message)) as unknown as pg.QueryResult<R> | pg.QueryResult<R>[];
      if (preparing) this.prepared.add(client);
      return Array.isArray(result) ? result : [result];
    } catch (error) {
      if (preparing || !(error instanceof pg.DatabaseError) || error.severity !== 'ERROR' || error.code === STALE_PREPARED) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** The answer recorded for a key, best first; empty when none was. */
  async findAnswer(key: AnswerKey): Promise<RankedRecommendation[]> {
    const [{ rows }] = await this.send<StoredRow>(`SELECT ${ANSWER_COLUMNS} FROM ${SCHEMA}.recommendation WHERE ${keyCondition(key)} ORDER BY rank`);
    return rows.map(view);
  }

  /**
   * The first look of an answer, one round trip: the answer recorded for the key if there is
   * one, else the search's candidates, under `statement_timeout` = searchTimeoutMs (a search that
   * runs out of time fails with PostgreSQL's query_canceled, 57014) and without JIT (the search is
   * a few index scans bounded by their LIMITs, far cheaper than compiling it).
   */
  async replayOrSearch(
    key: AnswerKey,
    search: { query: string; context: string; contextWeight: number; limit: number },
    searchTimeoutMs: number,
  ): Promise<FirstLook> {
    const results = await this.send<FirstLookRow>(replayOrSearch(key, search), { settings: settings(searchTimeoutMs) });
    const rows = results[results.length - 1].rows;
    if (rows.length > 0 && rows[0].recorded) return { kind: 'replay', recommendations: rows.map(view) };
    return {
      kind: 'search',
      candidates: rows.map((row) => ({
        ad_id: row.ad_id,
        product_id: row.product_id,
        product_title: row.product_title,
        weave_summary: row.weave_summary,
        tail_summary: row.tail_summary,
        creative_input: row.creative_input,
        landing_url: row.landing_url,
        strength: Number(row.strength),
      })),
    };
  }

  /**
   * Records the answer `found` (not empty) for the key in one statement: the request row, one
   * row per recommendation and one `generated` event each in the outbox, or nothing when another
   * request recorded the key's answer first (`lost_race`).
   */
  async record(key: AnswerKey, requestId: string, found: (Omit<AdCandidate, 'strength'> & { score: number })[]): Promise<AnswerOutcome> {
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
    const statement = recordAnswer(key, requestId, createdAt.toISOString(), JSON.stringify(rows), JSON.stringify(events));
    const results = await this.send<{ recorded: number }>(statement, { settings: settings(RECORD_TIMEOUT_MS) });
    if (results[results.length - 1].rows[0].recorded === 0) return { kind: 'lost_race' };
    return { kind: 'recorded', recommendations, events };
  }
}
