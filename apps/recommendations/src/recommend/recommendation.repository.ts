import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { RECOMMENDATIONS_SCHEMA, type RecommendationEntity } from '#libs/catalog';
import { pgPoolOf, quoteLiteral, quotedTextArray, type OutboxEventRow } from '#libs/database';
import { EventSubjects, type RankedRecommendation, type RecommendationEventDto, type Traffic } from '#libs/contracts';
import { searchStatement } from '../ranking/ad-search.repository.js';
import { SCORE_SQL } from '../ranking/relevance.js';

/** Who asked which message: the idempotency key of an answer. */
export interface AnswerKey {
  agent_id: string;
  traffic: Traffic;
  session_id: string;
  message_id: string;
}

/** An outbox row: an event written in the transaction of the recommendation it announces. */
export type PendingEvent = OutboxEventRow<RecommendationEventDto>;

/** A text a statement cannot carry: PostgreSQL stores no NUL character (the caller answers invalid_request). */
export class UnstorableText extends Error {
  constructor(readonly field: string) {
    super(`${field} holds a NUL character (\\u0000), which cannot be stored`);
  }
}

export const GENERATED_SUBJECT = `${EventSubjects.recommendationPrefix}generated`;

type StoredRow = Pick<
  RecommendationEntity,
  'recommendation_id' | 'ad_id' | 'product_id' | 'product_title' | 'weave_summary' | 'tail_summary' | 'creative_input' | 'landing_url' | 'score' | 'created_at'
>;

/** `rec_` and 24 random hex digits (96 bits). */
export function newRecommendationId(): string {
  return `rec_${randomBytes(12).toString('hex')}`;
}

/** Prefix of a `generated` event's id, before its recommendation's id (here and in ANSWER's SQL). */
const GENERATED_EVENT_PREFIX = 'evt_gen_';

/** Deterministic, so a republish of the same event is deduplicated by JetStream (Nats-Msg-Id). */
export function generatedEventId(recommendationId: string): string {
  return `${GENERATED_EVENT_PREFIX}${recommendationId}`;
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

/** A quoted SQL literal; a NUL cannot be carried by a statement. */
function literal(value: string, field: string): string {
  if (value.includes('\u0000')) throw new UnstorableText(field);
  return quoteLiteral(value);
}

/** Search text: a NUL separates words like a space does (to_tsvector sees no word in it). */
const searchText = (value: string) => quoteLiteral(value.includes('\u0000') ? value.replaceAll('\u0000', ' ') : value);

/** The four values of a key as quoted literals, in the order of the prepared statement's $1–$4. */
const keyLiterals = (key: AnswerKey) =>
  [literal(key.agent_id, 'agent_id'), literal(key.traffic, 'traffic'), literal(key.session_id, 'session_id'), literal(key.message_id, 'message_id')] as const;

function keyCondition(key: AnswerKey): string {
  const [agent, traffic, session, message] = keyLiterals(key);
  return `agent_id = ${agent} AND traffic = ${traffic} AND session_id = ${session} AND message_id = ${message}`;
}

/**
 * feature_not_supported: what EXECUTE answers when a migration changed the result columns of a
 * prepared statement ("cached plan must not change result type"); its connection is closed, and
 * the next one prepares the statements anew.
 */
const STALE_PREPARED = '0A000';

/** Name of the prepared statement of an answer, on every pooled connection that served one. */
const ANSWER_STATEMENT = 'recommend_answer';

/** What an answer's statement did: replayed the key's recorded answer, recorded a new one, found nothing, or lost the race to record it. */
export type Answered =
  | { kind: 'replay'; recommendations: RankedRecommendation[] }
  | { kind: 'recorded'; recommendations: RankedRecommendation[]; events: PendingEvent[] }
  | { kind: 'none' }
  /** Another request with the same key recorded its answer first (after this statement's snapshot): read that one. */
  | { kind: 'lost_race' };

/** What the search of an answer needs; `minScore` is the relevance floor (0–100). */
export interface AnswerSearch {
  query: string;
  context: string;
  contextWeight: number;
  limit: number;
  minScore: number;
}

/** Ids of published events whose outbox rows are to be deleted, and the callers waiting for it. */
interface Deletions {
  ids: string[];
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

/** `outcome` of a row of the answer's statement. */
type Outcome = 'replay' | 'recorded' | 'lost';
type AnswerRow = StoredRow & { outcome: Outcome };

/**
 * An answer in one statement (data-modifying CTEs, one snapshot, one implicit transaction):
 *
 * - `recorded`: the answer recorded for the key ($1–$4), if there is one; then nothing else runs
 *   (the search's branch is gated by a one-time filter);
 * - `found`: else the search (query $5, context $6, context weight $7, limit $8), each ad scored
 *   0–100 by SCORE_SQL (relevanceScore), those under the floor $9 dropped, ranked 1.. best first;
 * - `request`: when something was found, the request row (request id $10, created_at $11):
 *   ON CONFLICT DO NOTHING, so of two concurrent requests with the same key the second waits for
 *   the first to commit and then inserts nothing;
 * - `recommendations` and `events`: only when that row was inserted, one row per recommendation
 *   (ids $12, by rank) and its `generated` event in the outbox (the payload of
 *   `generatedEvent`, created_at as the text $11). Plain inserts: the recommendations' primary
 *   key is the key and rank (the request row just inserted makes them new), and a repeated
 *   recommendation id (96 random bits) would fail the statement on the outbox's primary key
 *   rather than drop an event;
 * - `published`: the outbox rows of events JetStream has acknowledged meanwhile ($13), deleted in
 *   this transaction rather than by a statement and a commit of their own (outbox deletes ride
 *   on the answers; see `deletePublished`).
 *
 * Rows: the replayed answer (`replay`), or the recorded one (`recorded`), or one `lost` row when
 * another request recorded the key's answer first (its rows are not in this statement's snapshot:
 * the caller reads them), or none when nothing was found.
 */
const ANSWER = `WITH recorded AS (
    SELECT ${ANSWER_COLUMNS}, rank FROM ${SCHEMA}.recommendation WHERE agent_id = $1 AND traffic = $2 AND session_id = $3 AND message_id = $4
  ), found AS (
    SELECT s.*, (row_number() OVER (ORDER BY s.strength DESC, s.ad_id))::smallint AS rank
      FROM (SELECT f.*, (${SCORE_SQL('f.strength')})::numeric(4, 1) AS score
              FROM (${searchStatement({ query: '$5', context: '$6', contextWeight: '$7', limit: '$8' })}) f
             WHERE NOT EXISTS (SELECT 1 FROM recorded)) s
     WHERE s.score >= $9 AND s.score > 0
  ), request AS (
    INSERT INTO ${SCHEMA}.recommendation_request (agent_id, traffic, session_id, message_id, request_id, created_at)
    SELECT $1, $2, $3, $4, $10, $11::timestamptz WHERE EXISTS (SELECT 1 FROM found)
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), recommendations AS (
    INSERT INTO ${SCHEMA}.recommendation
      (recommendation_id, agent_id, traffic, session_id, message_id, rank, ad_id, product_id, product_title, weave_summary, tail_summary, creative_input, landing_url, score, created_at)
    SELECT $12[f.rank], $1, $2, $3, $4, f.rank, f.ad_id, f.product_id, f.product_title, f.weave_summary, f.tail_summary, f.creative_input, f.landing_url, f.score, $11::timestamptz
      FROM request, found f
    RETURNING ${ANSWER_COLUMNS}, rank
  ), published AS (
    DELETE FROM ${SCHEMA}.outbox WHERE event_id = ANY($13)
  ), events AS (
    INSERT INTO ${SCHEMA}.outbox (event_id, subject, payload)
    SELECT '${GENERATED_EVENT_PREFIX}' || r.recommendation_id, '${GENERATED_SUBJECT}',
           jsonb_build_object('event_id', '${GENERATED_EVENT_PREFIX}' || r.recommendation_id, 'recommendation_id', r.recommendation_id, 'agent_id', $1::text,
             'traffic', $2::text, 'recommendation_created_at', $11::text, 'occurred_at', $11::text, 'billable', false, 'ad_id', r.ad_id, 'product_id', r.product_id)
      FROM recommendations r
  )
  SELECT 'replay' AS outcome, ${ANSWER_COLUMNS}, rank FROM recorded
  UNION ALL
  SELECT 'recorded', ${ANSWER_COLUMNS}, rank FROM recommendations
  UNION ALL
  SELECT 'lost', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
   WHERE EXISTS (SELECT 1 FROM found) AND NOT EXISTS (SELECT 1 FROM request)
  ORDER BY rank`;

/**
 * The answer's statement prepared (SQL PREPARE: parsed and analysed once per connection; planned
 * at its first EXECUTE and, under plan_cache_mode = force_generic_plan, never again).
 */
export const PREPARE_STATEMENTS = `PREPARE ${ANSWER_STATEMENT} (text, text, text, text, text, text, float8, int, float8, text, text, text[]) AS ${ANSWER}`;

/**
 * The settings of an answer's statement, for the implicit transaction of its message only:
 * `statement_timeout` (searchTimeoutMs of what is left of the answer's deadline: the search and the recording are
 * one statement, cancelled together), the cached generic plan rather than a plan per EXECUTE
 * (the same plan: the statement's shape does not depend on the values), and no JIT (the search is
 * a few index scans bounded by their LIMITs, far cheaper than compiling it).
 */
const settings = (timeoutMs: number) =>
  `SET LOCAL statement_timeout = ${timeout(timeoutMs)}; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL jit = off; `;

/**
 * How long the ids of published events wait for an answer's statement to delete their outbox
 * rows before a DELETE of their own does (when no answer comes).
 */
export const PUBLISHED_DELETE_WAIT_MS = 50;

/** The answer's EXECUTE, its values as literals. */
function answerStatement(key: AnswerKey, requestId: string, createdAt: string, ids: string[], search: AnswerSearch, published: string[]): string {
  const weight = Number(search.contextWeight);
  const minScore = Number(search.minScore);
  if (!Number.isFinite(weight) || !Number.isFinite(minScore) || !Number.isSafeInteger(search.limit)) throw new TypeError('contextWeight, minScore and limit must be numbers');
  return (
    `EXECUTE ${ANSWER_STATEMENT}(${keyLiterals(key).join(', ')}, ${searchText(search.query)}, ${searchText(search.context)}, ${weight}, ${search.limit}, ` +
    `${minScore}, ${literal(requestId, 'request_id')}, ${quoteLiteral(createdAt)}, ${quotedTextArray(ids)}, ${quotedTextArray(published)})`
  );
}

/** The `generated` event of a recorded recommendation (what the answer's statement writes to the outbox, and the relay publishes). */
export function generatedEvent(key: AnswerKey, r: RankedRecommendation): PendingEvent {
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
}

/** Seconds of `statement_timeout` as a SET LOCAL value (whole milliseconds, at least 1). */
const timeout = (ms: number) => `'${Math.max(1, Math.ceil(ms))}ms'`;

/**
 * The recorded answers (schema recommendations). An answer is recorded once per key: the request
 * row's primary key decides which of two concurrent requests records it, and the loser returns
 * what the winner recorded. Empty answers are not recorded: there is nothing to repeat.
 *
 * The hot path is one round trip to PostgreSQL, one simple-protocol message run as one implicit
 * transaction: `SET LOCAL` of the budget (statement_timeout), the generic plan and no JIT, then
 * an EXECUTE of the prepared statement ANSWER (replay, or search, score and record;
 * docs/decisions/recommend-one-round-trip.md). Each pooled connection prepares it once (its first
 * answer's message carries the PREPARE), so PostgreSQL neither parses nor plans it per answer.
 * Raw SQL on the pg pool (docs/decisions/recommend-hot-path-sql.md): TypeORM's query builders,
 * `find` and its transaction wrapper spent more CPU than PostgreSQL spent running these
 * statements. The EXECUTE
 * arguments are quoted literals (pg's escaping; a NUL is refused): a simple-protocol message has
 * no parameters, and it is what lets `SET LOCAL statement_timeout` travel with the statement.
 * The entities stay the schema's definition (migrations, ops).
 */
@Injectable()
export class RecommendationRepository {
  private pool?: pg.Pool;

  constructor(private readonly dataSource: DataSource) {}

  /** The DataSource's own pg pool. */
  private get db(): pg.Pool {
    this.pool ??= pgPoolOf(this.dataSource);
    return this.pool;
  }

  /** The pooled connections whose session holds the prepared statement. */
  private readonly prepared = new WeakSet<pg.PoolClient>();

  /** Published events whose outbox rows the next answer's statement deletes, and who waits for it. */
  private deletions: Deletions = { ids: [], waiters: [] };
  private deletionTimer?: NodeJS.Timeout;

  /**
   * Deletes the outbox rows of published events: the next answer's statement carries their ids
   * (its DELETE commits with the answer, no message or commit of its own), or, when no answer
   * starts within PUBLISHED_DELETE_WAIT_MS, one DELETE does. Resolves once the rows are gone;
   * rejects when that DELETE failed (the rows stay: the relay's sweep publishes them again,
   * JetStream drops the repeat by its Nats-Msg-Id).
   */
  deletePublished(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      for (const id of eventIds) this.deletions.ids.push(id);
      this.deletions.waiters.push({ resolve, reject });
      this.scheduleDeleteAlone();
    });
  }

  /** The DELETE of their own that the pending deletions get if no answer carries them first. */
  private scheduleDeleteAlone(): void {
    this.deletionTimer ??= setTimeout(() => void this.deleteAlone(), PUBLISHED_DELETE_WAIT_MS);
  }

  /** The pending deletions, for one statement to carry. */
  private takeDeletions(): Deletions {
    const taken = this.deletions;
    if (taken.ids.length === 0) return taken;
    this.deletions = { ids: [], waiters: [] };
    clearTimeout(this.deletionTimer);
    this.deletionTimer = undefined;
    return taken;
  }

  /** Deletions a failed statement carried go back to the queue, for the next one. */
  private requeue(deletions: Deletions): void {
    if (deletions.ids.length === 0) return;
    this.deletions.ids.push(...deletions.ids);
    this.deletions.waiters.push(...deletions.waiters);
    this.scheduleDeleteAlone();
  }

  /**
   * No answer came to carry them: one DELETE, its commit not waiting for the WAL flush
   * (`synchronous_commit = off` for this transaction only). A delete lost to a PostgreSQL crash
   * leaves rows whose events the sweep publishes again, so its durability buys nothing.
   */
  private async deleteAlone(): Promise<void> {
    const { ids, waiters } = this.takeDeletions();
    if (ids.length === 0) return;
    try {
      await this.db.query(`SET LOCAL synchronous_commit = off; DELETE FROM ${SCHEMA}.outbox WHERE event_id = ANY(${quotedTextArray(ids)}::text[])`);
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  /**
   * One simple-protocol message on a pooled connection. A statement's error (a search over
   * time: query_canceled) leaves the connection usable (the message's implicit transaction
   * ended with it), so the connection goes back to the pool; `pool.query` would close it, and
   * under overload every late search would cost a new connection.
   *
   * With `settings`, `text` is an EXECUTE of the prepared statement, run after them; on a
   * connection that has not prepared it yet, the PREPARE goes in the same message, after the
   * settings (so its statement_timeout bounds them too). A prepared statement outlives the
   * transaction that made it, even when a later statement of the message fails: a connection
   * whose preparing message failed is closed rather than reused with a half-known session.
   */
  private async send<R extends pg.QueryResultRow>(text: string, settings?: string): Promise<pg.QueryResult<R>[]> {
    const client = await this.db.connect();
    let broken: Error | undefined;
    const preparing = settings !== undefined && !this.prepared.has(client);
    try {
      const message = settings === undefined ? text : `${settings}${preparing ? `${PREPARE_STATEMENTS}; ` : ''}${text}`;
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
   * An answer in one round trip (ANSWER): the answer recorded for the key if there is one, else
   * the search and, when it found ads scoring at least `minScore`, the answer recorded with its
   * `generated` events in the outbox; under `statement_timeout` = timeoutMs, so a late search
   * fails with PostgreSQL's query_canceled (57014) and records nothing.
   */
  async answer(key: AnswerKey, requestId: string, search: AnswerSearch, timeoutMs: number): Promise<Answered> {
    const createdAt = new Date().toISOString();
    const ids = Array.from({ length: search.limit }, newRecommendationId);
    const statement = answerStatement(key, requestId, createdAt, ids, search, this.deletions.ids);
    const deletions = this.takeDeletions();
    let results: pg.QueryResult<AnswerRow>[];
    try {
      results = await this.send<AnswerRow>(statement, settings(timeoutMs));
    } catch (error) {
      this.requeue(deletions);
      throw error;
    }
    for (const waiter of deletions.waiters) waiter.resolve();
    const rows = results[results.length - 1].rows;
    if (rows.length === 0) return { kind: 'none' };
    switch (rows[0].outcome) {
      case 'replay':
        return { kind: 'replay', recommendations: rows.map(view) };
      case 'lost':
        return { kind: 'lost_race' };
      default: {
        const recommendations = rows.map(view);
        return { kind: 'recorded', recommendations, events: recommendations.map((r) => generatedEvent(key, r)) };
      }
    }
  }
}
