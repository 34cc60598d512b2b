/**
 * Recommendation benchmark: POST /agent/recommend through the real deployment shape — the gateway
 * and the recommendations service as child processes from dist/, a private nats-server, a fresh
 * PostgreSQL database per catalog — under autocannon, beside the ceiling of the architecture
 * measured in the same run: a bare NestJS-on-Fastify child process whose one route does one NATS
 * request/reply to a responder child process that records three recommendation rows and one
 * outbox row in PostgreSQL (ceiling-app.ts recommend-responder), with no search.
 *
 * Catalogs: the 24-ad sample imported with `ops ads import` (at 1 and 20 connections), then
 * generated catalogs (catalog-generator.ts, loaded by catalog-load.ts) of BENCH_CATALOG_SIZES
 * ads at CONNECTIONS connections. Every request asks a new question (2–9 words about one of the
 * dozen categories) with a new session and message, at the default latency budget.
 *
 * Relevance, on each generated catalog: the labelled set test/relevance/labelled-questions.json
 * (a category per question, or none when nothing should be found), asked one at a time at the
 * largest budget: precision@3 (the share of the three answer slots filled by an ad of the
 * expected category) and the share of "nothing found" answered with no recommendation. And the
 * search statement alone (AdSearchRepository on one connection, the labelled questions, after a
 * first pass): its latency, which is what must not follow the catalog's size.
 *
 *   npm run bench:recommend
 *   BENCH_CATALOG_SIZES=10000,100000,1000000 CONNECTIONS=50 DURATION=20 are the defaults;
 *   BENCH_SAMPLE=0 skips the 24-ad rows, BENCH_LOAD=0 measures relevance only, BENCH_RELEVANCE=0 load only;
 *   BENCH_CPU_PROF=<dir> writes CPU profiles of the gateway and the recommendations service;
 *   BENCH_BUDGET_MS=5000 asks every request with that latency budget (CPU of answers, not of 503s, on a loaded machine);
 *   BENCH_NODE_ARGS='--trace-gc' flags for the gateway's and the recommendations service's node processes, after their own (a later flag wins).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import pg from 'pg';
import type { EntityManager } from 'typeorm';
import { RECOMMEND_DEFAULT_LATENCY_BUDGET_MS, RECOMMEND_MAX_LATENCY_BUDGET_MS, RECOMMEND_MAX_RESULTS } from '#libs/contracts';
import { AdSearchRepository } from '../apps/recommendations/src/ranking/ad-search.repository.js';
import { POSTGRES_ADMIN_URL, REDIS_URL, freePort, newTestDatabase, startNats, type TestDatabase } from '../test/support/index.js';
import { CATEGORY_NAMES, questionAbout, type LabelledQuestion } from './catalog-generator.js';
import { prng } from '../test/support/prng.js';
import { loadCatalog } from './catalog-load.js';
import { autocannon, cpuOf, residentMemory, startChild, waitForHttp, type Child, type LoadFigures } from './harness.js';
import { fmt, machine, percentile, processCpuSeconds, setting } from './support.js';

const CONNECTIONS = setting('CONNECTIONS', 50);
const SECONDS = setting('DURATION', 20);
/**
 * WARMUP: seconds of load before each measured one, for ours and the ceiling alike (default 10):
 * V8's optimizing compiler is still at work 15–55 s after a service starts, so a short warm-up
 * charges compilation to the service with the larger code (docs/decisions/gateway-hot-path-measured.md).
 */
const WARMUP_SECONDS = Math.min(setting('WARMUP', 10), SECONDS);
const SIZES = (process.env.BENCH_CATALOG_SIZES ?? '10000,100000,1000000').split(',').map(Number).filter((n) => n > 0);
const SAMPLE = process.env.BENCH_SAMPLE !== '0';
const LOAD = process.env.BENCH_LOAD !== '0';
const RELEVANCE = process.env.BENCH_RELEVANCE !== '0';
/**
 * BENCH_BUDGET_MS: the latency budget every request asks for (default: none sent, i.e. the default
 * budget). A large one (5000) measures the CPU of answers rather than of 503s on a loaded machine.
 */
const BUDGET_MS = process.env.BENCH_BUDGET_MS ? Number(process.env.BENCH_BUDGET_MS) : undefined;
/** BENCH_CPU_PROF=<dir>: the gateway and the recommendations service write V8 CPU profiles there when stopped. */
const CPU_PROF = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const AGENT = 'agent_bench_recommend';
const LABELLED = 'test/relevance/labelled-questions.json';
/** Targets: answers ≥ 0.5 of the ceiling's req/s at 100,000 ads and ≥ 0.4 at 1,000,000; p99 ≤ 2 × the ceiling's; p99(1M) ≤ 2 × p99(10k). */
const RPS_TARGET: Record<number, number> = { 100000: 0.5, 1000000: 0.4 };
const P99_TARGET = 2;
const run = promisify(execFile);

/**
 * CPU per request of a measured load, in microseconds (from /proc): `cpuUs` of the Node processes
 * (`perProcessUs` each, in the order given), `pgUs` of the PostgreSQL backends serving the
 * load's database, `okCpuUs` Node CPU per 2xx answer; `load` the load average after it.
 */
type Measured = LoadFigures & { cpuUs: number; perProcessUs: number[]; pgUs: number; okCpuUs: number; load: number };

interface Row {
  catalog: string;
  connections: number;
  figures: Measured;
  ceiling: Measured;
  rssMb?: number;
  relevance?: Relevance;
}
interface Relevance {
  precisionAt3: number;
  nothingRight: number;
  unavailable: number;
  questions: number;
}

/** A load whose every request asks a new question with a new session and message. */
async function recommendLoad(url: string, connections: number, seconds: number, headers: Record<string, string>): Promise<LoadFigures> {
  const rng = prng(Date.now() % 2 ** 31);
  const seen = new Set<string>();
  let n = 0;
  const body = () => {
    let query = questionAbout(rng, Math.floor(rng() * CATEGORY_NAMES.length));
    for (let tries = 0; seen.has(query) && tries < 5; tries++) query = questionAbout(rng, Math.floor(rng() * CATEGORY_NAMES.length));
    seen.add(query);
    n++;
    return JSON.stringify({ session_id: `ses_bench_${process.pid}_${n}`, message_id: `msg_${n}`, query, latency_budget_ms: BUDGET_MS });
  };
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [{ method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, setupRequest: (request) => ({ ...request, method: 'POST', body: body() }) }],
  });
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).filter(([status]) => !status.startsWith('2')).map(([status, { count }]) => [status, count]));
  return {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.average,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** CPU seconds of each PostgreSQL backend connected to the database of `databaseUrl` (pg_stat_activity, /proc). */
async function backendCpu(databaseUrl: string): Promise<Map<number, number>> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, processCpuSeconds(pid));
      } catch {
        // The backend ended meanwhile.
      }
    }
    return cpu;
  } finally {
    await admin.end();
  }
}

/**
 * A warm-up, then the measured load; CPU microseconds per request the `measured` processes and
 * the PostgreSQL backends of `databaseUrl` spent (from /proc: what the machine's other load
 * does not change, unlike req/s).
 */
async function measure(url: string, connections: number, measured: Child[], databaseUrl: string, headers: Record<string, string> = {}): Promise<Measured> {
  await recommendLoad(url, connections, WARMUP_SECONDS, headers);
  const before = cpuOf(measured);
  const pgBefore = await backendCpu(databaseUrl);
  const figures = await recommendLoad(url, connections, SECONDS, headers);
  const after = cpuOf(measured);
  const pgAfter = await backendCpu(databaseUrl);
  let pgSeconds = 0;
  for (const [pid, seconds] of pgAfter) pgSeconds += seconds - (pgBefore.get(pid) ?? 0);
  const perRequest = (seconds: number, requests = figures.total) => (seconds * 1e6) / Math.max(1, requests);
  const perProcessUs = after.map((seconds, i) => perRequest(seconds - before[i]));
  const nodeSeconds = after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0);
  return {
    ...figures,
    cpuUs: perRequest(nodeSeconds),
    perProcessUs,
    pgUs: perRequest(pgSeconds),
    okCpuUs: perRequest(nodeSeconds, figures.ok),
    load: loadavg()[0],
  };
}

/** The labelled set asked one question at a time (largest budget: quality, not speed). */
async function relevance(url: string, headers: Record<string, string>): Promise<Relevance> {
  const questions = JSON.parse(await readFile(LABELLED, 'utf8')) as LabelledQuestion[];
  let slots = 0;
  let categoryQuestions = 0;
  let nothingRight = 0;
  let nothingQuestions = 0;
  let unavailable = 0;
  for (const [i, { query, expected }] of questions.entries()) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: `ses_relevance_${process.pid}_${Date.now()}`, message_id: `msg_${i}`, query, latency_budget_ms: RECOMMEND_MAX_LATENCY_BUDGET_MS }),
    });
    const body = (await response.json()) as { recommendations?: { creative_input: { category?: string } }[] };
    if (response.status === 503) unavailable++;
    const found = body.recommendations ?? [];
    if (expected === null) {
      nothingQuestions++;
      if (response.status === 200 && found.length === 0) nothingRight++;
    } else {
      categoryQuestions++;
      slots += found.slice(0, 3).filter((r) => r.creative_input.category === expected).length;
    }
  }
  return { precisionAt3: slots / (3 * categoryQuestions), nothingRight: nothingRight / nothingQuestions, unavailable, questions: questions.length };
}

/** The search statement alone over the labelled questions, one at a time on one connection (second pass timed): p50, p99 in ms. */
async function searchLatency(databaseUrl: string): Promise<{ p50: number; p99: number }> {
  const questions = JSON.parse(await readFile(LABELLED, 'utf8')) as LabelledQuestion[];
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-search' });
  await client.connect();
  try {
    await client.query(`SET jit = off`);
    // The repository's only use of its manager is query(sql, parameters).
    const manager = { query: async (sql: string, parameters: unknown[]) => (await client.query(sql, parameters)).rows } as unknown as EntityManager;
    const search = new AdSearchRepository();
    const times: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      for (const { query } of questions) {
        const started = process.hrtime.bigint();
        await search.search(manager, { query, context: '', contextWeight: 0.3, limit: RECOMMEND_MAX_RESULTS });
        if (pass === 1) times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99) };
  } finally {
    await client.end();
  }
}

async function ops(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['dist/apps/ops/src/main.js', ...args], { env: { ...process.env, ...env }, timeout: 120_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** The gateway and the recommendations service on `db`, with a live key of AGENT. */
async function startStack(
  natsUrl: string,
  db: TestDatabase,
): Promise<{ url: string; headers: Record<string, string>; recommendations: Child; children: Child[]; stop(): Promise<void> }> {
  const common = { NATS_URL: natsUrl, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
  const children: Child[] = [];
  const stop = async () => {
    for (const child of [...children].reverse()) await child.stop();
  };
  try {
    const recommendationsPort = await freePort();
    const recommendations = startChild('recommendations', 'dist/apps/recommendations/src/main.js', { ...common, RECOMMENDATIONS_HTTP_PORT: recommendationsPort }, [], [...NODE_ARGS, ...CPU_PROF]);
    children.push(recommendations);
    await waitForHttp(`http://127.0.0.1:${recommendationsPort}/health/ready`, { child: recommendations });
    const gatewayPort = await freePort();
    const gateway = startChild('gateway', 'dist/apps/gateway/src/main.js', { ...common, PORT: gatewayPort, TRACKING_SIGNING_SECRET: 'bench-recommend-tracking-signing-secret' }, [], [...NODE_ARGS, ...CPU_PROF]);
    children.push(gateway);
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/health/ready`, { child: gateway });
    await ops(common, 'platform', 'create', '--agent-id', AGENT);
    const { api_key: apiKey } = (await ops(common, 'key', 'create', '--agent-id', AGENT, '--mode', 'live')) as { api_key: string };
    return { url: `http://127.0.0.1:${gatewayPort}/agent/recommend`, headers: { authorization: `Bearer ${apiKey}` }, recommendations, children, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

const ms = (n: number) => `${fmt(n)} ms`;
const us = (n: number) => `${fmt(n)} µs`;
/** Node CPU per request (each process's share), PostgreSQL backends' CPU per request. */
const cpu = (m: Measured) => `${us(m.cpuUs)} (${m.perProcessUs.map(fmt).join(' + ')}) + PG ${us(m.pgUs)}`;
const line = (row: Row) => {
  const f = row.figures;
  const c = row.ceiling;
  const ratio = f.rps / c.rps;
  const p99 = f.p99 / Math.max(1, c.p99);
  return (
    `| ${row.catalog} | ${row.connections} | ${fmt(f.rps)} | ${ms(f.p50)} | ${ms(f.p99)} | ${fmt(f.statuses?.['503'] ?? 0)} of ${fmt(f.total)} | ` +
    `${fmt(c.rps)} req/s, p99 ${ms(c.p99)} | ${ratio.toFixed(2)} | ${p99.toFixed(2)}× | ${cpu(f)} | ${us(f.okCpuUs)} | ${cpu(c)} | ` +
    `${f.load.toFixed(1)} (ceiling ${c.load.toFixed(1)}) | ${row.rssMb === undefined ? '' : `${fmt(row.rssMb)} MB`} |`
  );
};
const HEADER =
  '| catalog | connections | answers 2xx/s | p50 | p99 | 503 | ceiling (same run) | req/s ratio | p99 ratio | CPU per request: Node (recommendations + gateway) + PostgreSQL | Node CPU per 2xx | ceiling CPU per request: Node (responder + server) + PostgreSQL | load average | recommendations RSS |';

async function main() {
  console.log(`machine: ${machine()}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at ${new Date().toISOString()}`);
  const nats = await startNats();
  const rows: Row[] = [];
  const ceilingDb = newTestDatabase();
  const children: Child[] = [];
  try {
    // The ceiling: its responder records into a migrated, empty schema `recommendations`.
    await loadCatalog(ceilingDb.url, 0);
    children.push(startChild('ceiling-responder', 'dist/bench/ceiling-app.js', { NATS_URL: nats.url, DATABASE_URL: ceilingDb.url }, ['recommend-responder']));
    const ceilingPort = await freePort();
    const server = startChild('ceiling-server', 'dist/bench/ceiling-app.js', { NATS_URL: nats.url, PORT: ceilingPort }, ['server']);
    children.push(server);
    await waitForHttp(`http://127.0.0.1:${ceilingPort}/`, { status: 404, child: server });
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}/ceiling/recommend`;
    // Measured again right before each row: on a shared machine, the load changes between rows.
    const ceilingAt = (connections: number) => measure(ceilingUrl, connections, children, ceilingDb.url);

    const catalogs: { name: string; size?: number; connections: number[] }[] = [
      ...(SAMPLE ? [{ name: '24 ads (the sample)', connections: [1, 20] }] : []),
      ...SIZES.map((size) => ({ name: `${fmt(size)} ads`, size, connections: [CONNECTIONS] })),
    ];
    for (const catalog of catalogs) {
      const db = newTestDatabase();
      try {
        if (catalog.size === undefined) {
          const imported = await ops({ DATABASE_URL: db.url }, 'ads', 'import', '--file', 'catalog/sample-catalog.json');
          console.log(`${catalog.name}: ops ads import ${JSON.stringify(imported)}`);
        } else {
          const seconds = await loadCatalog(db.url, catalog.size, { log: (text) => console.log(text) });
          console.log(`${catalog.name}: generated and loaded in ${Math.round(seconds)} s`);
        }
        const stack = await startStack(nats.url, db);
        try {
          if (catalog.size !== undefined) {
            const search = await searchLatency(db.url);
            console.log(`${catalog.name}: search statement alone, one connection: p50 ${search.p50.toFixed(1)} ms, p99 ${search.p99.toFixed(1)} ms`);
          }
          let relevanceFigures: Relevance | undefined;
          if (RELEVANCE && catalog.size !== undefined) {
            relevanceFigures = await relevance(stack.url, stack.headers);
            console.log(
              `${catalog.name}: relevance over ${relevanceFigures.questions} labelled questions: precision@3 ${relevanceFigures.precisionAt3.toFixed(3)}, ` +
                `"nothing found" right ${relevanceFigures.nothingRight.toFixed(3)}, 503 ${relevanceFigures.unavailable}`,
            );
          }
          if (LOAD) {
            for (const connections of catalog.connections) {
              const ceiling = await ceilingAt(connections);
              const figures = await measure(stack.url, connections, stack.children, db.url, stack.headers);
              const rss = (await residentMemory(stack.recommendations)).rss / 2 ** 20;
              const row = { catalog: catalog.name, connections, figures, ceiling, rssMb: rss, relevance: relevanceFigures };
              rows.push(row);
              console.log(line(row));
            }
          } else if (relevanceFigures) {
            rows.push({ catalog: catalog.name, connections: 0, figures: undefined as never, ceiling: undefined as never, relevance: relevanceFigures });
          }
        } finally {
          await stack.stop();
        }
      } finally {
        await db.drop();
      }
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
    await nats.stop();
    await ceilingDb.drop();
  }

  console.log('');
  console.log(
    `POST /agent/recommend, new question, session and message per request, budget ${BUDGET_MS !== undefined ? `${BUDGET_MS} ms` : `default (${RECOMMEND_DEFAULT_LATENCY_BUDGET_MS} ms)`}, ${SECONDS} s per load after ${WARMUP_SECONDS} s warm-up; ` +
      `gateway → NATS → recommendations (child processes from dist, LOG_LEVEL=warn); ceiling beside each row at the same connections:`,
  );
  if (LOAD) {
    console.log(HEADER);
    console.log(HEADER.replace(/[^|]+/g, ' - '));
    for (const row of rows) console.log(line(row));
  }
  for (const row of rows.filter((r) => r.relevance)) {
    console.log(`relevance ${row.catalog}: precision@3 ${row.relevance!.precisionAt3.toFixed(3)}, "nothing found" right ${row.relevance!.nothingRight.toFixed(3)}`);
  }
  if (!LOAD) return;
  const sized = rows.filter((r) => r.connections === CONNECTIONS && !r.catalog.startsWith('24'));
  for (const row of sized) {
    const size = Number(row.catalog.replace(/\D/g, ''));
    const target = RPS_TARGET[size];
    const ratio = row.figures.rps / row.ceiling.rps;
    const verdicts = [
      ...(target ? [`req/s ≥ ${target} of ceiling: ${ratio >= target ? 'met' : 'NOT met'} (${ratio.toFixed(2)})`] : []),
      `p99 ≤ ${P99_TARGET}× ceiling: ${row.figures.p99 <= P99_TARGET * row.ceiling.p99 ? 'met' : 'NOT met'}`,
      `no 503: ${(row.figures.statuses?.['503'] ?? 0) === 0 ? 'met' : 'NOT met'}`,
    ];
    console.log(`targets ${row.catalog}: ${verdicts.join('; ')}`);
  }
  const small = sized.find((r) => r.catalog === '10,000 ads');
  const large = sized.find((r) => r.catalog === '1,000,000 ads');
  if (small && large) {
    console.log(`p99 at 1,000,000 ≤ 2× p99 at 10,000: ${large.figures.p99 <= 2 * small.figures.p99 ? 'met' : 'NOT met'} (${ms(large.figures.p99)} vs ${ms(small.figures.p99)})`);
  }
}

await main();
