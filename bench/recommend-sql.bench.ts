/**
 * PostgreSQL's side of an answer, without NATS, the gateway or the services: RecommendationRepository
 * (the service's own statement) on a pool of POOL connections, CALLERS callers asking new questions
 * with new keys (every answer searched and recorded), and the deletion of each 20 answers'
 * outbox rows as the relay asks for it (GeneratedEventsOutbox.markPublished), on a generated catalog. Prints the CPU per
 * answer of the database's backends (from /proc) and of this process (the repository's Node side).
 *
 *   node dist/bench/recommend-sql.bench.js [DATABASE_URL]   (default: a fresh database with SIZE ads)
 *   SIZE=100000 ANSWERS=3000 POOL=10 CALLERS=4 are the defaults; a database URL skips the loading
 *   (its catalog loaded by catalog-load.js); PERF=1 prints the backends' pids and waits 3 s first,
 *   for `perf record -p`.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { createRecommendationsDataSource } from '#libs/catalog';
import { GeneratedEventsOutbox } from '../apps/recommendations/src/recommend/generated-events.relay.js';
import { RecommendationRepository, type PendingEvent } from '../apps/recommendations/src/recommend/recommendation.repository.js';
import { POSTGRES_ADMIN_URL, newTestDatabase } from '../test/support/index.js';
import { prng } from '../test/support/prng.js';
import { CATEGORY_NAMES, questionAbout } from './catalog-generator.js';
import { loadCatalog } from './catalog-load.js';
import { processCpuSeconds, setting } from './support.js';

const SIZE = setting('SIZE', 100_000);
const ANSWERS = setting('ANSWERS', 3000);
const POOL = setting('POOL', 10);
const CALLERS = setting('CALLERS', 4);
const DELETE_EVERY = 20;

async function backendPids(databaseUrl: string): Promise<number[]> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'bench-recommend-sql'`, [name]);
    return rows.map((r) => r.pid);
  } finally {
    await admin.end();
  }
}

async function main() {
  const given = process.argv[2];
  const db = given ? undefined : newTestDatabase();
  const url = given ?? db!.url;
  try {
    if (db) console.log(`${SIZE.toLocaleString('en-US')} ads loaded in ${Math.round(await loadCatalog(url, SIZE))} s`);
    const dataSource: DataSource = createRecommendationsDataSource(url, POOL, 'bench-recommend-sql');
    await dataSource.initialize();
    const repository = new RecommendationRepository(dataSource);
    const outbox = new GeneratedEventsOutbox(dataSource, repository);
    const rng = prng(Date.now() % 2 ** 31);
    const run = `${process.pid}_${Date.now()}`;
    let asked = 0;
    let next = 0;
    const deletions: Promise<void>[] = [];
    let recorded = 0;
    let pending: PendingEvent[] = [];
    const caller = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const n = next++;
        asked++;
        const answered = await repository.answer(
          { agent_id: 'agent_bench_sql', traffic: 'live', session_id: `ses_${run}`, message_id: `msg_${n}` },
          `req_${n}`,
          { query: questionAbout(rng, n % CATEGORY_NAMES.length), context: '', contextWeight: 0.3, limit: 3, minScore: 10 },
          5000,
        );
        if (answered.kind !== 'recorded') continue;
        recorded++;
        pending.push(...answered.events);
        if (recorded % DELETE_EVERY === 0) {
          const batch = pending;
          pending = [];
          deletions.push(outbox.markPublished(batch.map((e) => e.event_id)));
        }
      }
    };
    // Warm-up: every pooled connection prepares its statement.
    await Promise.all(Array.from({ length: POOL }, () => caller(20)));
    const pids = await backendPids(url);
    if (process.env.PERF) {
      console.log(`backends: ${pids.join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    const pgBefore = pids.map((pid) => processCpuSeconds(pid));
    const nodeBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    asked = 0;
    recorded = 0;
    await Promise.all(Array.from({ length: CALLERS }, () => caller(Math.ceil(ANSWERS / CALLERS))));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // A pooled connection left idle past the pool's idle timeout (those only the warm-up used) has closed: it did no work meanwhile.
    const pgSeconds = pids.reduce((sum, pid, i) => sum + (existsSync(`/proc/${pid}/stat`) ? processCpuSeconds(pid) - pgBefore[i] : 0), 0);
    const node = process.cpuUsage(nodeBefore);
    const per = (s: number) => Math.round((s * 1e6) / asked);
    console.log(
      `${asked} answers (${recorded} recorded) in ${seconds.toFixed(1)} s (${Math.round(asked / seconds)}/s), ${CALLERS} callers, pool ${POOL}: ` +
        `PostgreSQL ${per(pgSeconds)} µs per answer, this process ${per((node.user + node.system) / 1e6)} µs; load average ${loadavg()[0].toFixed(1)}`,
    );
    await Promise.all(deletions);
    await dataSource.destroy();
  } finally {
    await db?.drop();
  }
}

await main();
