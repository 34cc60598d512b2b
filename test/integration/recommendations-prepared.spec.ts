import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { createRecommendationsDataSource, importCatalog, validateCatalog } from '#libs/catalog';
import { initializeDatabase, type ServiceDataSource } from '#libs/database';
import { RecommendationRepository, type AnswerKey } from '../../apps/recommendations/src/recommend/recommendation.repository.js';
import { relevanceScore } from '../../apps/recommendations/src/ranking/relevance.js';
import { connectSql, useTestStack } from '../support/index.js';

/**
 * The answer's two statements are prepared once per pooled connection and run from their
 * cached generic plan; the per-request budget (statement_timeout) still cancels a late search,
 * and the connection stays usable, or is closed when the message that prepared it failed. On a
 * pool of one connection, so that what one call prepared is what the next one finds. And the
 * word weight the search rescoring computes (term_weight, inlined) is the one the word index holds.
 */
const stack = useTestStack();
let dataSource: ServiceDataSource;
let repository: RecommendationRepository;
let sql: pg.Client;
let sequence = 0;

const key = (): AnswerKey => ({ agent_id: 'agent_prepared', traffic: 'live', session_id: 'sess_prepared', message_id: `msg_${++sequence}` });
const search = (query: string) => ({ query, context: '', contextWeight: 0.3, limit: 3 });

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

it('searches and records from generic plans prepared once per connection, and replays what it recorded', async () => {
  const asked = key();
  const first = await repository.replayOrSearch(asked, search('running shoes'), 5000);
  if (first.kind !== 'search') throw new Error('expected a search');
  expect(first.candidates[0].ad_id).toMatch(/^ad_run_/);
  const outcome = await repository.record(
    asked,
    'req_prepared',
    first.candidates.map((ad) => ({ ...ad, score: relevanceScore(ad.strength) })),
  );
  if (outcome.kind !== 'recorded') throw new Error('expected the answer recorded');
  for (const query of ['coffee beans', 'noise cancelling headphones', 'yoga mat']) {
    expect((await repository.replayOrSearch(key(), search(query), 5000)).kind).toBe('search');
  }
  const again = await repository.replayOrSearch(asked, search('something else entirely'), 5000);
  expect(again).toEqual({ kind: 'replay', recommendations: outcome.recommendations });

  const statements = (await dataSource.query(
    `SELECT name, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE from_sql ORDER BY name`,
  )) as { name: string; generic: number; custom: number }[];
  expect(statements).toEqual([
    { name: 'recommend_first_look', generic: 5, custom: 0 },
    { name: 'recommend_record', generic: 1, custom: 0 },
  ]);
  const { rows } = await sql.query(`SELECT count(*)::int AS n FROM recommendations.outbox WHERE payload->>'recommendation_id' = ANY($1)`, [
    outcome.recommendations.map((r) => r.recommendation_id),
  ]);
  expect(rows[0].n).toBe(outcome.recommendations.length);
});

it('cancels a late search on a prepared connection with query_canceled, and the connection serves the next answer', async () => {
  await repository.replayOrSearch(key(), search('running shoes'), 5000);
  const pid = await backendPid(dataSource);
  const late = key();
  await withCatalogLocked(() => expect(repository.replayOrSearch(late, search('coffee beans'), 50)).rejects.toMatchObject({ code: '57014' }));
  const { rows } = await sql.query(`SELECT count(*)::int AS n FROM recommendations.recommendation_request WHERE message_id = $1`, [late.message_id]);
  expect(rows[0].n).toBe(0);
  expect((await repository.replayOrSearch(late, search('coffee beans'), 5000)).kind).toBe('search');
  expect(await backendPid(dataSource)).toBe(pid);
});

it('closes a connection whose preparing message failed, and prepares the next one afresh', async () => {
  const fresh = await onePool('recommendations-prepared-fresh-test');
  const pid = await backendPid(fresh.dataSource);
  await withCatalogLocked(() => expect(fresh.repository.replayOrSearch(key(), search('coffee beans'), 50)).rejects.toMatchObject({ code: '57014' }));
  const answered = await fresh.repository.replayOrSearch(key(), search('coffee beans'), 5000);
  if (answered.kind !== 'search') throw new Error('expected a search');
  expect(answered.candidates[0].ad_id).toBe('ad_coffee_beans_09');
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
  await repository.replayOrSearch(key(), search('running shoes'), 5000);
  const pid = await backendPid(dataSource);
  // A change of a result column's type: the cached plans of the first look cannot stay.
  await sql.query('ALTER TABLE recommendations.recommendation ALTER COLUMN created_at TYPE timestamp');
  await expect(repository.replayOrSearch(key(), search('running shoes'), 5000)).rejects.toMatchObject({ code: '0A000' });
  const answered = await repository.replayOrSearch(key(), search('running shoes'), 5000);
  if (answered.kind !== 'search') throw new Error('expected a search');
  expect(answered.candidates[0].ad_id).toMatch(/^ad_run_/);
  expect(await backendPid(dataSource)).not.toBe(pid);
});
