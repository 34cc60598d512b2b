/**
 * Breakdown benchmark (DESIGN §9): GET /agent/reporting/breakdown?time_range=90d&by=ad through the
 * deployment shape — the gateway and reporting-projection as child processes from dist/, a
 * private nats-server, a fresh PostgreSQL database, Redis — for one platform with ADS (default
 * 100,000) distinct ads in the 90-day range (breakdown rollups, and the Report's hour and day
 * rollups summed from them, so that rows + other equal the Report). Autocannon, CONNECTIONS
 * connections looping over limits 20 and 100 and the four sort keys; beside it, from the same
 * run and gateway: the 90d Report read (a NATS round trip per request) and /health/live (no I/O).
 * Printed with it: CPU per request of each process, the publication's cost of that breakdown,
 * and the ingest cost of breakdown rollups (rows and bytes per event, from INGEST_EVENTS
 * lifecycle events applied through the projection into a second database).
 *
 *   npm run bench:breakdown                 (DURATION=5 ADS=20000 npm run bench:breakdown for a quick run)
 *   CONNECTIONS=50 DURATION=20 ADS=100000 INGEST_EVENTS=20000 are the defaults; RATE=500 offers that
 *   many requests per second in all (open loop) instead of as many as are answered, so that p99 is
 *   the latency at that load rather than at saturation.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { Report, ReportBreakdown } from '#libs/contracts';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { initializeDatabase } from '#libs/database';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../apps/reporting-projection/src/ingestion/projection.repository.js';
import { ProjectionService } from '../apps/reporting-projection/src/ingestion/projection.service.js';
import { StoragePartitions } from '../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { BreakdownBuilder } from '../apps/reporting-projection/src/publication/breakdown-builder.service.js';
import { REDIS_URL, freePort, newTestDatabase, startNats, waitFor } from '../test/support/index.js';
import { cpuSeconds, describeLoad, load, startChild, waitForHttp, type Child, type LoadFigures } from './harness.js';
import { fmt, machine } from './support.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const SECONDS = Number(process.env.DURATION ?? 20);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const ADS = Number(process.env.ADS ?? 100_000);
const INGEST_EVENTS = Number(process.env.INGEST_EVENTS ?? 20_000);
const RATE = process.env.RATE ? Number(process.env.RATE) : undefined;
const TARGET_P99_MS = 50;
const AGENT = 'agent_breakdown_big';
const KEYS_PER_LOAD = 8;
const BREAKDOWN_PATHS = ['exposures', 'clicks', 'conversions', 'earnings_micros'].flatMap((sort) =>
  [20, 100].map((limit) => `/agent/reporting/breakdown?time_range=90d&by=ad&limit=${limit}&sort=${sort}`),
);
const REPORT_PATH = '/agent/reporting?time_range=90d';
const COUNTERS = `exposures, clicks, engagements, conversions, earnings_micros, earnings_excluded_recommendations,
  pending_earnings_recommendations, accounting_review_required`;

/** ADS ads, each with one or two hours of activity inside the last 89 days; the Report's hour and day rows summed from them. */
async function synthesize(url: string, now: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET TIME ZONE 'UTC'`);
    const started = Date.now();
    const lastHour = new Date(Math.floor(now / 3_600_000) * 3_600_000 - 3_600_000).toISOString();
    await client.query(
      `SELECT reporting.ensure_breakdown_partitions(array_agg(w)) FROM generate_series($1::timestamptz - interval '91 days', $1::timestamptz, interval '1 day') w`,
      [lastHour],
    );
    const { rowCount } = await client.query(
      `INSERT INTO reporting.breakdown_pair (agent_id, traffic, bucket, ad_id, product_id, exposures, clicks, engagements, conversions, earnings_micros)
       SELECT $1, 'live', bucket, ad_id, product_id, sum(e), sum(e / 3), sum(e / 9), sum(e / 12), sum((e / 3) * 250000 + i)
         FROM (SELECT $2::timestamptz - ((i * 7 + k * 13) % (89 * 24)) * interval '1 hour' AS bucket,
                      'ad_' || lpad(i::text, 6, '0') AS ad_id, 'prod_' || lpad((i % 5000)::text, 5, '0') AS product_id,
                      1 + (i * 7) % 13 AS e, i
                 FROM generate_series(0, $3::int - 1) i CROSS JOIN LATERAL generate_series(0, CASE WHEN i % 3 = 0 THEN 1 ELSE 0 END) k) x
        GROUP BY bucket, ad_id, product_id`,
      [AGENT, lastHour, ADS],
    );
    console.log(`  breakdown_pair: ${fmt(rowCount ?? 0)} rows (${fmt(ADS)} ads, a third of them in two hours; each ad of one of 5,000 products)`);
    for (const grain of ['hour', 'day']) {
      await client.query(
        `INSERT INTO reporting.rollup_${grain} (agent_id, traffic, bucket, ${COUNTERS})
         SELECT agent_id, traffic, date_trunc('${grain}', bucket), sum(exposures), sum(clicks), sum(engagements), sum(conversions), sum(earnings_micros), 0, 0, 0
           FROM reporting.breakdown_pair GROUP BY 1, 2, 3`,
      );
    }
    await client.query('VACUUM (ANALYZE) reporting.breakdown_pair, reporting.rollup_hour, reporting.rollup_day');
    console.log(`  rollup_hour and rollup_day summed from them; synthesized and vacuumed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

interface CpuShare {
  gateway: number;
  reporting: number;
  generator: number;
}

async function measured(run: () => Promise<LoadFigures>, metrics: { gateway: string; reporting: string }): Promise<LoadFigures & { cpu: CpuShare }> {
  const before = { gateway: await cpuSeconds(metrics.gateway), reporting: await cpuSeconds(metrics.reporting), generator: process.cpuUsage() };
  const figures = await run();
  const generator = process.cpuUsage(before.generator);
  const per = (seconds: number) => (1000 * seconds) / figures.total;
  return {
    ...figures,
    cpu: {
      gateway: per((await cpuSeconds(metrics.gateway)) - before.gateway),
      reporting: per((await cpuSeconds(metrics.reporting)) - before.reporting),
      generator: per((generator.user + generator.system) / 1e6),
    },
  };
}

const describeCpu = (c: CpuShare) => `CPU per request: gateway ${c.gateway.toFixed(3)} ms, reporting-projection ${c.reporting.toFixed(3)} ms, load generator ${c.generator.toFixed(3)} ms`;

/**
 * Ingest cost: INGEST_EVENTS lifecycle events (a quarter of the recommendations over 40 ads, each
 * generated, shown, and some clicked) applied through ProjectionService in batches of 500 into a
 * fresh database; rows and bytes of each rollup table per event.
 */
async function ingestCost(): Promise<void> {
  const db = newTestDatabase();
  const dataSource = createReportingDataSource(db.url, 2);
  try {
    await initializeDatabase(dataSource);
    const now = Date.now();
    const encoder = new TextEncoder();
    const messages: InboundMessage[] = [];
    for (let r = 0; messages.length < INGEST_EVENTS; r++) {
      const created = new Date(now - 6 * 86_400_000 + r * 20_000).toISOString();
      const base = { recommendation_id: `rec_${r}`, agent_id: `agent_${r % 4}`, traffic: 'live', recommendation_created_at: created, occurred_at: created };
      const kinds = r % 3 === 0 ? ['generated', 'shown', 'clicked'] : ['generated', 'shown'];
      for (const kind of kinds) {
        const payload = { ...base, event_id: `evt_${r}_${kind}`, ad_id: `ad_${r % 40}`, product_id: `prod_${r % 10}` };
        messages.push({ subject: `events.recommendation.${kind}`, data: encoder.encode(JSON.stringify(payload)), sequence: messages.length + 1, deliveries: 1 });
      }
    }
    const projection = new ProjectionService(new ProjectionRepository(dataSource, new StoragePartitions(dataSource)), 1);
    const cpu = process.cpuUsage();
    for (let i = 0; i < messages.length; i += 500) await projection.applyBatch(messages.slice(i, i + 500));
    const used = process.cpuUsage(cpu);
    const sizes: { table: string; rows: string; bytes: string }[] = await dataSource.query(
      `SELECT p.relname AS table, sum(c.reltuples)::bigint AS rows, sum(pg_total_relation_size(c.oid))::bigint AS bytes
         FROM pg_class p LEFT JOIN pg_inherits i ON i.inhparent = p.oid JOIN pg_class c ON c.oid = COALESCE(i.inhrelid, p.oid)
        WHERE p.relnamespace = 'reporting'::regnamespace AND p.relname IN ('breakdown_pair', 'rollup_minute', 'rollup_hour', 'rollup_day', 'recommendation') AND p.relkind IN ('r', 'p')
        GROUP BY p.relname ORDER BY p.relname`,
    );
    await dataSource.query('ANALYZE');
    const counts: { table: string; rows: string }[] = await dataSource.query(
      `SELECT 'breakdown_pair' AS table, count(*) AS rows FROM reporting.breakdown_pair UNION ALL SELECT 'rollup_minute', count(*) FROM reporting.rollup_minute
       UNION ALL SELECT 'rollup_hour', count(*) FROM reporting.rollup_hour UNION ALL SELECT 'rollup_day', count(*) FROM reporting.rollup_day
       UNION ALL SELECT 'recommendation', count(*) FROM reporting.recommendation`,
    );
    console.log('');
    console.log(`ingest cost: ${fmt(messages.length)} lifecycle events (4 platforms, 40 ads, 10 products, one recommendation every 20 s over ${fmt(messages.length / 2.33 / 4320)} days) through ProjectionService, batches of 500; this process's CPU ${fmt((1000 * (used.user + used.system)) / 1e6 / messages.length * 1000)} µs per event (the database's is not in it)`);
    for (const { table, rows } of counts) {
      const bytes = Number(sizes.find((s) => s.table === table)?.bytes ?? 0);
      console.log(`  ${table}: ${fmt(Number(rows))} rows, ${(Number(rows) / messages.length).toFixed(3)} rows and ${fmt(bytes / messages.length)} bytes (table + indexes) per event`);
    }
  } finally {
    await dataSource.destroy().catch(() => undefined);
    await db.drop();
  }
}

async function main() {
  console.log(`machine: ${machine()}`);
  console.log(
    `conditions: ${CONNECTIONS} connections, ${RATE ? `${fmt(RATE)} requests/s offered` : 'closed loop (as fast as answered)'}, ${SECONDS} s per load after ${WARMUP_SECONDS} s warm-up, ` +
      `${fmt(ADS)} distinct ads in the 90d range of one platform; load average ${loadavg().map((l) => l.toFixed(2)).join(', ')}`,
  );
  const nats = await startNats();
  const db = newTestDatabase();
  const children: Child[] = [];
  let identityDb: DataSource | undefined;
  let reportingDb: DataSource | undefined;
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1', TRACKING_SIGNING_SECRET: 'bench-breakdown-tracking-signing-secret' };
    const reportingPort = await freePort();
    const reporting = startChild('reporting-projection', 'dist/apps/reporting-projection/src/main.js', { ...common, REPORTING_HTTP_PORT: reportingPort });
    children.push(reporting);
    await waitForHttp(`http://127.0.0.1:${reportingPort}/health/ready`, { child: reporting });
    const gatewayPort = await freePort();
    const gateway = startChild('gateway', 'dist/apps/gateway/src/main.js', { ...common, PORT: gatewayPort });
    children.push(gateway);
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/health/ready`, { child: gateway });
    const base = `http://127.0.0.1:${gatewayPort}`;
    const cpuOf = { gateway: `${base}/metrics`, reporting: `http://127.0.0.1:${reportingPort}/metrics` };

    console.log(`synthesizing ${fmt(ADS)} ads`);
    await synthesize(db.url, Date.now());
    identityDb = createIdentityDataSource(db.url, 2, 'bench-breakdown');
    await identityDb.initialize();
    const identity = new IdentityRepository(identityDb);
    await identity.createPlatform(AGENT);
    const keysFor = async () => Promise.all(Array.from({ length: KEYS_PER_LOAD }, async () => (await identity.createKey(AGENT, 'live')).api_key));
    const [breakdownKeys, reportKeys] = [await keysFor(), await keysFor()];

    const get = async <T>(path: string, key: string) => {
      const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
      return { status: response.status, body: (await response.json()) as T, bytes: Number(response.headers.get('content-length') ?? 0) };
    };
    // The first request registers the scope (202) and has it prepared at once; then rows + other against the report of the same cutoff.
    const started = performance.now();
    await waitFor(async () => (await get(BREAKDOWN_PATHS[0], breakdownKeys[0])).status === 200, { timeoutMs: 120_000, intervalMs: 100, what: 'a prepared breakdown' });
    const preparedMs = performance.now() - started;
    const same = await waitFor(
      async () => {
        const breakdown = await get<ReportBreakdown>(BREAKDOWN_PATHS[1], breakdownKeys[0]);
        const report = await get<Report>(REPORT_PATH, breakdownKeys[0]);
        return report.status === 200 && breakdown.status === 200 && breakdown.body.processed_through === report.body.processed_through ? { breakdown, report: report.body } : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'a breakdown and a report of one cutoff' },
    );
    for (const name of ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'] as const) {
      const sum = same.breakdown.body.rows.reduce((s, row) => s + row[name], same.breakdown.body.other[name]);
      if (sum !== same.report[name]) throw new Error(`rows + other = ${sum} ${name}, the report says ${same.report[name]}`);
    }
    console.log(
      `breakdown (90d, by ad) prepared on first request in ${fmt(preparedMs)} ms; rows + other equal the 90d report (${fmt(same.report.exposures)} exposures); ` +
        `limit=100 answer: ${fmt(same.breakdown.bytes || Buffer.byteLength(JSON.stringify(same.breakdown.body)))} bytes of JSON`,
    );

    const requests = BREAKDOWN_PATHS.flatMap((path) => breakdownKeys.map((key) => ({ path, headers: { authorization: `Bearer ${key}` } })));
    await load(`${base}${BREAKDOWN_PATHS[0]}`, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, requests });
    const breakdownFigures = await measured(() => load(`${base}${BREAKDOWN_PATHS[0]}`, { connections: CONNECTIONS, seconds: SECONDS, requests, overallRate: RATE }), cpuOf);

    const reportRequests = reportKeys.map((key) => ({ path: REPORT_PATH, headers: { authorization: `Bearer ${key}` } }));
    await load(`${base}${REPORT_PATH}`, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, requests: reportRequests });
    const reportFigures = await measured(() => load(`${base}${REPORT_PATH}`, { connections: CONNECTIONS, seconds: SECONDS, requests: reportRequests, overallRate: RATE }), cpuOf);

    const ceilingUrl = `${base}/health/live`;
    await load(ceilingUrl, { connections: CONNECTIONS, seconds: WARMUP_SECONDS });
    const ceilingFigures = await measured(() => load(ceilingUrl, { connections: CONNECTIONS, seconds: SECONDS, overallRate: RATE }), cpuOf);

    for (const child of children.splice(0).reverse()) await child.stop();

    // What a publication pays for this platform's breakdowns (by ad and by product), as runCycle reads them.
    reportingDb = new DataSource({ type: 'postgres', url: db.url, poolSize: 1 });
    await reportingDb.initialize();
    const builder = new BreakdownBuilder(reportingDb);
    const processedThrough = new Date(same.report.processed_through);
    const builds: Record<string, number[]> = { ad: [], product: [] };
    for (const by of ['ad', 'product'] as const) {
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await reportingDb.transaction('REPEATABLE READ', (manager) => builder.build([{ agentId: AGENT, traffic: 'live', timeRange: '90d', by }], processedThrough, new Date(), manager));
        builds[by].push(performance.now() - t);
      }
    }

    console.log('');
    console.log(`GET /agent/reporting/breakdown?time_range=90d&by=ad (limit 20 and 100, each of the 4 sorts), ${CONNECTIONS} connections, ${SECONDS} s:`);
    console.log(`  ${describeLoad(breakdownFigures)}`);
    console.log(`  ${describeCpu(breakdownFigures.cpu)}`);
    console.log(
      `  target p99 ≤ ${TARGET_P99_MS} ms: ${breakdownFigures.p99 <= TARGET_P99_MS ? 'met' : 'NOT met'}; non-2xx = 0: ${breakdownFigures.non2xx === 0 && breakdownFigures.errors === 0 ? 'met' : 'NOT met'}`,
    );
    console.log(`same run, same gateway and platform: GET ${REPORT_PATH} (a NATS round trip per request, as the breakdown):`);
    console.log(`  ${describeLoad(reportFigures)}`);
    console.log(`  ${describeCpu(reportFigures.cpu)}`);
    console.log(`ceiling: GET /health/live of the same gateway (no authentication, no I/O):`);
    console.log(`  ${describeLoad(ceilingFigures)}`);
    console.log(
      `  the breakdown reaches ${((100 * breakdownFigures.rps) / reportFigures.rps).toFixed(0)} % of the report read's req/s and ${((100 * breakdownFigures.rps) / ceilingFigures.rps).toFixed(0)} % of the ceiling's; ` +
        `p99 ${breakdownFigures.p99} ms against the report's ${reportFigures.p99} ms`,
    );
    console.log(`load average after the loads: ${loadavg().map((l) => l.toFixed(2)).join(', ')}`);
    console.log(`publication cost of this platform's 90d breakdown (one statement, ${fmt(ADS)} ads; 3 runs): by ad ${builds.ad.map((ms) => `${fmt(ms)} ms`).join(', ')}; by product ${builds.product.map((ms) => `${fmt(ms)} ms`).join(', ')}`);

    await ingestCost();
  } finally {
    for (const child of children.reverse()) await child.stop();
    if (identityDb?.isInitialized) await identityDb.destroy();
    if (reportingDb?.isInitialized) await reportingDb.destroy();
    await nats.stop();
    await db.drop();
  }
}

await main();
