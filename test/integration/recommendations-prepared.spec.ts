import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { createRecommendationsDataSource, importCatalog, validateCatalog } from '#libs/catalog';
import { initializeDatabase, quotedTextArray, type ServiceDataSource } from '#libs/database';
import { RecommendationRepository, type AnswerKey } from '../../apps/recommendations/src/recommend/recommendation.repository.js';
import { SCORE_SQL, relevanceScore } from '../../apps/recommendations/src/ranking/relevance.js';
import { connectSql, useTestStack } from '../support/index.js';

/**
 * The answer's statement (replay, or search and record) is prepared once per pooled connection
 * and runs from its cached generic plan; the per-request budget (statement_timeout) still cancels
 * a late search, and the connection stays usable, or is closed when the message that prepared it failed. On a
 * pool of one connection, so that what one call prepared is what the next one finds. And the
 * word weight the search rescoring computes (term_weight, inlined) is the one the word index holds.
 */
const stack = useTestStack();
let dataSource: ServiceDataSource;
let repository: RecommendationRepository;
let sql: pg.Client;
let sequence = 0;

const key = (): AnswerKey => ({ agent_id: 'agent_prepared', traffic: 'live', session_id: 'sess_prepared', message_id: `msg_${++sequence}` });
const search = (query: string) => ({ query, context: '', contextWeight: 0.3, limit: 3, minScore: 10 });
let requests = 0;
const ask = (asked: AnswerKey, query: string, timeoutMs = 5000) => repository.answer(asked, `req_prepared_${++requests}`, search(query), timeoutMs);

/** A repository on a pool of one connection (the schema migrated beforehand: migrations need two). */
async function onePool(name: string): Promise<{ dataSource: ServiceDataSource; repository: RecommendationRepository }> {
  const source = createRecommendationsDataSource(stack.db.url, 1, name);
  await source.initialize();
  stack.atEnd(() => source.destroy());
  return { dataSource: source, repository: new RecommendationRepository(source) };
}

const backendPid = async (source: ServiceDataSource) => ((await source.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[])[0].pid;

/** Holds an exclusive lock on the catalog while `run` runs: a search (or a PREPARE) waits for it until its statement_timeout. */
async function withCatalogLocked<T>(run: () => Promise<T>): Promise<T> {
  const blocker = new pg.Client({ connectionString: stack.db.url });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE recommendations.ads IN ACCESS EXCLUSIVE MODE');
    return await run();
  } finally {
    await blocker.query('ROLLBACK').catch(() => undefined);
    await blocker.end();
  }
}

beforeAll(async () => {
  const catalog = createRecommendationsDataSource(stack.db.url, 2, 'recommendations-prepared-catalog');
  await initializeDatabase(catalog);
  stack.atEnd(() => catalog.destroy());
  const file = validateCatalog(JSON.parse(readFileSync(resolve('catalog/sample-catalog.json'), 'utf8')));
  if (!file.ok) throw new Error(`sample catalog invalid: ${file.problems.join('; ')}`);
  await importCatalog(catalog, file.ads);
  ({ dataSource, repository } = await onePool('recommendations-prepared-test'));
  sql = await connectSql(stack);
});

it('searches and records from a generic plan prepared once per connection, and replays what it recorded', async () => {
  const asked = key();
  const outcome = await ask(asked, 'running shoes');
  if (outcome.kind !== 'recorded') throw new Error('expected the answer recorded');
  expect(outcome.recommendations[0].ad_id).toMatch(/^ad_run_/);
  for (const query of ['coffee beans', 'noise cancelling headphones', 'gaming laptop']) {
    expect((await ask(key(), query)).kind).toBe('recorded');
  }
  const again = await ask(asked, 'something else entirely');
  expect(again).toEqual({ kind: 'replay', recommendations: outcome.recommendations });
  expect(await ask(key(), 'zzzqx')).toEqual({ kind: 'none' });

  const statements = (await dataSource.query(
    `SELECT name, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE from_sql ORDER BY name`,
  )) as { name: string; generic: number; custom: number }[];
  expect(statements).toEqual([{ name: 'recommend_answer', generic: 6, custom: 0 }]);
  // The outbox holds the very events the relay is handed (what the sweep publishes after a crash).
  const { rows } = await sql.query<{ event_id: string; subject: string; payload: unknown }>(
    `SELECT event_id, subject, payload FROM recommendations.outbox WHERE payload->>'recommendation_id' = ANY($1) ORDER BY payload->>'recommendation_id'`,
    [outcome.recommendations.map((r) => r.recommendation_id)],
  );
  const sorted = [...outcome.events].sort((a, b) => (a.payload.recommendation_id < b.payload.recommendation_id ? -1 : 1));
  expect(rows).toEqual(sorted);
  expect(outcome.events.map((e) => e.payload.recommendation_id)).toEqual(outcome.recommendations.map((r) => r.recommendation_id));
});

it('records a recommendation under one index (the key and rank a replay reads) and no foreign-key check', async () => {
  const { rows: indexes } = await sql.query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'recommendations' AND tablename = 'recommendation'`);
  expect(indexes).toEqual([{ indexname: 'recommendation_pkey', indexdef: expect.stringContaining('(agent_id, traffic, session_id, message_id, rank)') }]);
  const { rows: constraints } = await sql.query(`SELECT conname FROM pg_constraint WHERE conrelid = 'recommendations.recommendation'::regclass AND contype IN ('f', 'u')`);
  expect(constraints).toEqual([]);
  // A replay reads the recorded rows through that key, ids and all.
  const asked = key();
  const outcome = await ask(asked, 'gaming laptop');
  if (outcome.kind !== 'recorded') throw new Error('expected the answer recorded');
  expect(await ask(asked, 'gaming laptop')).toEqual({ kind: 'replay', recommendations: outcome.recommendations });
});

it('scores in SQL as relevanceScore does, and records the scores it answers', async () => {
  const strengths = [0, -1, 1e-9, 0.0125, 0.02, 1 / 30, 0.05, 0.1999, 0.2, 0.8, 3.7, 1e6];
  for (let i = 1; i < 400; i++) strengths.push(i / 997, i / 31.7);
  const { rows } = await sql.query<{ s: number; score: string }>(
    `SELECT s, (${SCORE_SQL('s')})::numeric(4, 1)::text AS score FROM unnest($1::float8[]) AS s`,
    [strengths],
  );
  expect(rows.map((r) => Number(r.score))).toEqual(strengths.map(relevanceScore));
  const outcome = await ask(key(), 'coffee beans');
  if (outcome.kind !== 'recorded') throw new Error('expected the answer recorded');
  const stored = await sql.query<{ score: string }>(`SELECT score::text FROM recommendations.recommendation WHERE recommendation_id = ANY($1) ORDER BY rank`, [
    outcome.recommendations.map((r) => r.recommendation_id),
  ]);
  expect(stored.rows.map((r) => Number(r.score))).toEqual(outcome.recommendations.map((r) => r.contextual_relevance_score));
  expect(outcome.recommendations.every((r) => r.contextual_relevance_score >= 10)).toBe(true);
});

it('answers lost_race, recording nothing, when another request recorded the key after its snapshot', async () => {
  const asked = key();
  const blocker = new pg.Client({ connectionString: stack.db.url });
  await blocker.connect();
  try {
    // The other request: its request row inserted, not yet committed; ours waits on it, then inserts nothing.
    await blocker.query('BEGIN');
    await blocker.query(
      `INSERT INTO recommendations.recommendation_request (agent_id, traffic, session_id, message_id, request_id, created_at) VALUES ($1, $2, $3, $4, 'req_other', now())`,
      [asked.agent_id, asked.traffic, asked.session_id, asked.message_id],
    );
    const ours = ask(asked, 'running shoes');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await blocker.query('COMMIT');
    expect(await ours).toEqual({ kind: 'lost_race' });
  } finally {
    await blocker.end();
  }
  const { rows } = await sql.query(`SELECT count(*)::int AS n FROM recommendations.recommendation WHERE message_id = $1`, [asked.message_id]);
  expect(rows[0].n).toBe(0);
});

it("deletes published events' outbox rows with the next answer, alone when none comes, and again after a failed answer", async () => {
  const outboxRows = async (ids: string[]) =>
    (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM recommendations.outbox WHERE event_id = ANY($1)`, [ids])).rows[0].n;
  const recordedEvents = async (query: string) => {
    const outcome = await ask(key(), query);
    if (outcome.kind !== 'recorded') throw new Error('expected the answer recorded');
    return outcome.events.map((e) => e.event_id);
  };

  const carried = await recordedEvents('running shoes');
  expect(await outboxRows(carried)).toBe(carried.length);
  const deleted = repository.deletePublished(carried);
  const next = await recordedEvents('coffee beans');
  await deleted;
  expect(await outboxRows(carried)).toBe(0);

  const alone = next;
  await repository.deletePublished(alone); // no answer meanwhile: a DELETE of its own
  expect(await outboxRows(alone)).toBe(0);

  const kept = await recordedEvents('gaming laptop');
  const afterFailure = repository.deletePublished(kept);
  await withCatalogLocked(() => expect(ask(key(), 'coffee beans', 50)).rejects.toMatchObject({ code: '57014' }));
  await afterFailure; // the cancelled answer's transaction deleted nothing; the ids went back to the queue
  expect(await outboxRows(kept)).toBe(0);
});

it('carries ids as a text[] literal that PostgreSQL reads back unchanged', async () => {
  const values = ['evt_gen_rec_0a1b', 'with "quotes"', 'back\\slash \\"', "it's", 'comma, {brace}', ' spaced ', 'NULL', '', 'ünï 😀'];
  const { rows } = await sql.query<{ a: string[] }>(`SELECT ${quotedTextArray(values)}::text[] AS a`);
  expect(rows[0].a).toEqual(values);
  expect((await sql.query<{ a: string[] }>(`SELECT ${quotedTextArray([])}::text[] AS a`)).rows[0].a).toEqual([]);
});

it('cancels a late search on a prepared connection with query_canceled, and the connection serves the next answer', async () => {
  await ask(key(), 'running shoes');
  const pid = await backendPid(dataSource);
  const late = key();
  await withCatalogLocked(() => expect(ask(late, 'coffee beans', 50)).rejects.toMatchObject({ code: '57014' }));
  const { rows } = await sql.query(`SELECT count(*)::int AS n FROM recommendations.recommendation_request WHERE message_id = $1`, [late.message_id]);
  expect(rows[0].n).toBe(0);
  expect((await ask(late, 'coffee beans')).kind).toBe('recorded');
  expect(await backendPid(dataSource)).toBe(pid);
});

it('closes a connection whose preparing message failed, and prepares the next one afresh', async () => {
  const fresh = await onePool('recommendations-prepared-fresh-test');
  const pid = await backendPid(fresh.dataSource);
  await withCatalogLocked(() => expect(fresh.repository.answer(key(), 'req_fresh_1', search('coffee beans'), 50)).rejects.toMatchObject({ code: '57014' }));
  const answered = await fresh.repository.answer(key(), 'req_fresh_2', search('coffee beans'), 5000);
  if (answered.kind !== 'recorded') throw new Error('expected the answer recorded');
  expect(answered.recommendations[0].ad_id).toBe('ad_coffee_beans_09');
  expect(await backendPid(fresh.dataSource)).not.toBe(pid);
});

it('weighs every word as the aggregate definition of term_weight did (the inlined one, migration 1764720000000)', async () => {
  const { rows } = await sql.query(`
    WITH weights AS (
      SELECT u.weights AS w FROM recommendations.ads a, unnest(a.search_vector) u
      UNION ALL
      SELECT w FROM (VALUES (NULL::text[]), ('{}'), ('{D}'), ('{D,C}'), ('{C,B,D}'), ('{A,B,C,D}'), ('{B,B,B,B,B,B,B,B,B,B,B,B}')) v(w)
    )
    SELECT count(*)::int AS words,
           count(*) FILTER (WHERE recommendations.term_weight(w) IS DISTINCT FROM
             (SELECT (coalesce(max(CASE x WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4 WHEN 'C' THEN 0.15 ELSE 0.1 END), 0.1)
                      * (1 + ln(greatest(cardinality(w), 1)) / 10))::real FROM unnest(w) AS x))::int AS differ
      FROM weights`);
  expect(rows[0].words).toBeGreaterThan(100);
  expect(rows[0].differ).toBe(0);
});

// Last: it changes this file's own database's schema.
it('closes a connection whose prepared statement a migration made stale, and answers from a fresh one', async () => {
  await ask(key(), 'running shoes');
  const pid = await backendPid(dataSource);
  // A change of a result column's type: the cached plan of the answer's statement cannot stay.
  await sql.query('ALTER TABLE recommendations.recommendation ALTER COLUMN created_at TYPE timestamp');
  await expect(ask(key(), 'running shoes')).rejects.toMatchObject({ code: '0A000' });
  const answered = await ask(key(), 'running shoes');
  if (answered.kind !== 'recorded') throw new Error('expected the answer recorded');
  expect(answered.recommendations[0].ad_id).toMatch(/^ad_run_/);
  expect(await backendPid(dataSource)).not.toBe(pid);
});
