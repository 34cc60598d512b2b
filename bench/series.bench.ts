/**
 * Series benchmark (issue 13): GET /agent/reporting/series?time_range=90d&granularity=day through
 * the deployment shape — the gateway and reporting-projection as child processes from dist/, a
 * private nats-server, a fresh PostgreSQL database, Redis — for 20 platforms with 90 days of
 * rollups (minute rows every 5 minutes live and every 30 minutes test, hour and day rows
 * aggregated from them, so every grain agrees), half of them in Asia/Kathmandu (+05:45: no local
 * day covers a whole UTC day), the others in America/New_York and Australia/Lord_Howe; plus one
 * dense Kathmandu platform with a row in every minute. Autocannon, 50 connections, each looping
 * over the 20 platforms' keys; the same as CSV. Beside it, from the same run: the 90d report read
 * through the same gateway and keys (a NATS round trip per request), and the ceiling, the same
 * gateway's GET /health/live (no authentication, no I/O). Printed with it: CPU per request of
 * each process, rollup rows read per request (the projection's weave_series_rollup_rows_total
 * across the load) and per series computation (EXPLAIN ANALYZE of the statements of one series,
 * sparse and dense).
 *
 *   npm run bench:series                    (DURATION=5 npm run bench:series for a quick run)
 *   CONNECTIONS=50 DURATION=20 are the defaults.
 */
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { ReportSeries, Report } from '#libs/contracts';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { SERIES_GRANULARITIES, TIME_RANGES, isGranularityAllowed } from '#libs/contracts';
import { SeriesBuilder } from '../apps/reporting-projection/src/publication/series-builder.service.js';
import { SeriesQueryRepository } from '../apps/reporting-projection/src/publication/series-query.repository.js';
import { reportPeriod } from '../apps/reporting-projection/src/rules/periods.js';
import { seriesBuckets } from '../apps/reporting-projection/src/rules/series-buckets.js';
import { REDIS_URL, freePort, newTestDatabase, startNats, waitFor } from '../test/support/index.js';
import { cpuSeconds, describeLoad, load, metricSum, scrapeMetrics, startChild, waitForHttp, type Child, type LoadFigures } from './harness.js';
import { fmt, machine } from './support.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const SECONDS = Number(process.env.DURATION ?? 20);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const PLATFORMS = 20;
const DAYS = 92;
const TARGET_P99_MS = 30;
const SERIES_PATH = '/agent/reporting/series?time_range=90d&granularity=day';
const REPORT_PATH = '/agent/reporting?time_range=90d';
const DENSE_AGENT = 'agent_series_dense';
const COUNTERS = `exposures, clicks, engagements, conversions, earnings_micros, earnings_excluded_recommendations,
  pending_earnings_recommendations, accounting_review_required`;

const agentOf = (p: number) => `agent_series_${String(p).padStart(2, '0')}`;
const zoneOf = (p: number) => (p < PLATFORMS / 2 ? 'Asia/Kathmandu' : p % 2 ? 'America/New_York' : 'Australia/Lord_Howe');

/** Minute rows (every `step` minutes, offset per platform), then hour and day rows summed from them. */
async function synthesize(url: string, now: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET TIME ZONE 'UTC'`);
    const from = new Date(Math.floor((now - DAYS * 86_400_000) / 60_000) * 60_000).toISOString();
    const to = new Date(Math.floor(now / 60_000) * 60_000).toISOString();
    const started = Date.now();
    const agents = Array.from({ length: PLATFORMS }, (_, p) => agentOf(p));
    for (const [traffic, step, agentsOfTraffic] of [['live', 5, agents], ['test', 30, agents], ['live', 1, [DENSE_AGENT]]] as const) {
      const { rowCount } = await client.query(
        `INSERT INTO reporting.rollup_minute (agent_id, traffic, bucket, ${COUNTERS})
         SELECT a.agent_id, $4, m, x.e, x.e / 3, x.e / 9, x.e / 12, (x.e / 3) * 150000 + a.p, 0, 0, 0
           FROM unnest($1::text[]) WITH ORDINALITY a(agent_id, p)
          CROSS JOIN generate_series($2::timestamptz + (a.p % $5::int) * interval '1 minute', $3::timestamptz, $5::int * interval '1 minute') m
          CROSS JOIN LATERAL (SELECT 1 + ((a.p * 7 + extract(epoch FROM m)::bigint / 60) % 11)::int AS e) x
          ORDER BY m, a.agent_id`,
        [agentsOfTraffic, from, to, traffic, step],
      );
      console.log(`  rollup_minute: ${fmt(rowCount ?? 0)} ${traffic} rows, one every ${step} min (${agentsOfTraffic.length} platform${agentsOfTraffic.length > 1 ? 's' : ''})`);
    }
    for (const grain of ['hour', 'day']) {
      const { rowCount } = await client.query(
        `INSERT INTO reporting.rollup_${grain} (agent_id, traffic, bucket, ${COUNTERS})
         SELECT agent_id, traffic, date_trunc('${grain}', bucket) AS b, ${COUNTERS.split(',').map((c) => `sum(${c.trim()})`).join(', ')}
           FROM reporting.rollup_minute GROUP BY agent_id, traffic, b ORDER BY b, agent_id, traffic`,
      );
      console.log(`  rollup_${grain}: ${fmt(rowCount ?? 0)} rows (sums of the minute rows)`);
    }
    await client.query(
      `INSERT INTO reporting.platform_timezone (agent_id, timezone, updated_at) SELECT z.agent_id, z.timezone, now() FROM unnest($1::text[], $2::text[]) AS z(agent_id, timezone)`,
      [[...agents, DENSE_AGENT], [...agents.map((_, p) => zoneOf(p)), 'Asia/Kathmandu']],
    );
    await client.query('VACUUM (ANALYZE) reporting.rollup_day, reporting.rollup_hour, reporting.rollup_minute, reporting.platform_timezone');
    console.log(`  synthesized and vacuumed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function rowsRead(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  if (node['Relation Name']?.startsWith('rollup_')) {
    const rows = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1);
    into.set(node['Relation Name'], (into.get(node['Relation Name']) ?? 0) + rows);
  }
  for (const child of node.Plans ?? []) rowsRead(child, into);
  return into;
}

/** The statements one 90d daily series runs, EXPLAIN ANALYZEd: rollup rows read per table, and the plan of the minute scan. */
async function explainSeries(dataSource: DataSource, agentId: string, zone: string, processedThrough: Date) {
  const buckets = seriesBuckets(reportPeriod('90d', processedThrough, zone) as { start: Date; end: Date }, 'day', zone);
  const read = new Map<string, number>();
  const plan: string[] = [];
  for (const scan of SeriesQueryRepository.buildScans(buckets, [{ agentId, traffic: 'live' }])) {
    const [{ 'QUERY PLAN': json }] = await dataSource.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${scan.sql}`, scan.parameters);
    for (const [table, rows] of rowsRead((json as { Plan: PlanNode }[])[0].Plan)) read.set(table, (read.get(table) ?? 0) + rows);
    if (scan.grain === 'minute') plan.push(...((await dataSource.query(`EXPLAIN (ANALYZE) ${scan.sql}`, scan.parameters)) as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']));
  }
  const [days, hours, minutes] = ['rollup_day', 'rollup_hour', 'rollup_minute'].map((t) => read.get(t) ?? 0);
  return { agentId, zone, buckets: buckets.length, days, hours, minutes, total: days + hours + minutes, plan };
}

/** CPU milliseconds per request of the gateway, reporting-projection and the load generator (this process) during a load. */
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

function verdict(f: LoadFigures): string {
  return `target p99 ≤ ${TARGET_P99_MS} ms: ${f.p99 <= TARGET_P99_MS ? 'met' : 'NOT met'}; non-2xx = 0: ${f.non2xx === 0 && f.errors === 0 ? 'met' : 'NOT met'}`;
}

async function main() {
  console.log(`machine: ${machine()}`);
  const nats = await startNats();
  const db = newTestDatabase();
  const children: Child[] = [];
  let identityDb: DataSource | undefined;
  let reportingDb: DataSource | undefined;
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1', TRACKING_SIGNING_SECRET: 'bench-series-tracking-signing-secret' };
    const reportingPort = await freePort();
    const reporting = startChild('reporting-projection', 'dist/apps/reporting-projection/src/main.js', { ...common, REPORTING_HTTP_PORT: reportingPort });
    children.push(reporting);
    await waitForHttp(`http://127.0.0.1:${reportingPort}/health/ready`, { child: reporting });
    const gatewayPort = await freePort();
    // CPU_PROFILE=dir writes a V8 CPU profile of the gateway there (node --cpu-prof), to see where a request's time goes.
    const profile = process.env.CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROFILE}`] : [];
    const gateway = startChild('gateway', 'dist/apps/gateway/src/main.js', { ...common, PORT: gatewayPort }, [], profile);
    children.push(gateway);
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/health/ready`, { child: gateway });
    const base = `http://127.0.0.1:${gatewayPort}`;
    const metricsUrl = `http://127.0.0.1:${reportingPort}/metrics`;
    const cpuOf = { gateway: `${base}/metrics`, reporting: metricsUrl };

    console.log(`synthesizing ${PLATFORMS} platforms (+1 dense) × ${DAYS} days of rollups`);
    await synthesize(db.url, Date.now());
    identityDb = createIdentityDataSource(db.url, 2, 'bench-series');
    await identityDb.initialize();
    const identity = new IdentityRepository(identityDb);
    // A set of keys per load (JSON, CSV, report), so that no load meets a key whose rate-limit bucket an earlier one drained.
    const keys: string[] = [];
    const csvKeys: string[] = [];
    const reportKeys: string[] = [];
    for (let p = 0; p < PLATFORMS; p++) {
      await identity.createPlatform(agentOf(p));
      for (const set of [keys, csvKeys, reportKeys]) set.push((await identity.createKey(agentOf(p), 'live')).api_key);
    }
    await identity.createPlatform(DENSE_AGENT);
    const denseKey = (await identity.createKey(DENSE_AGENT, 'live')).api_key;

    // First requests register each series (202) and have it prepared at once; sums checked against the report of the same cutoff.
    const get = async <T>(path: string, key: string) => {
      const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
      return { status: response.status, body: (await response.json()) as T };
    };
    const prepared: number[] = [];
    let checked = 0;
    for (const key of [...keys, denseKey]) {
      const started = performance.now();
      await waitFor(async () => (await get(SERIES_PATH, key)).status === 200, { timeoutMs: 60_000, intervalMs: 50, what: 'a prepared series' });
      prepared.push(performance.now() - started);
      const same = await waitFor(
        async () => {
          const series = await get<ReportSeries>(SERIES_PATH, key);
          const report = await get<Report>(REPORT_PATH, key);
          return report.status === 200 && series.body.processed_through === report.body.processed_through ? { series: series.body, report: report.body } : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: 'a series and a report of one cutoff' },
      );
      const sum = same.series.buckets.reduce((s, b) => s + b.exposures, 0);
      if (sum !== same.report.exposures || same.series.buckets.reduce((s, b) => s + b.earnings_micros, 0) !== same.report.earnings_micros) {
        throw new Error(`series of ${same.series.agent_id} sums to ${sum} exposures, the report says ${same.report.exposures}`);
      }
      checked++;
    }
    const sample = (await get<ReportSeries>(SERIES_PATH, keys[0])).body;
    console.log(
      `${checked} series (90d, day) prepared on first request in ${fmt(Math.min(...prepared))}–${fmt(Math.max(...prepared))} ms each; ` +
        `each sums to its 90d report (exposures, earnings_micros). ${sample.agent_id} (${sample.timezone}): ${sample.buckets.length} buckets, ` +
        `first ${sample.buckets[0].start_at}–${sample.buckets[0].end_at}, second starts ${sample.buckets[1].start_at}; ` +
        `${fmt(Buffer.byteLength(JSON.stringify(sample)))} bytes of JSON`,
    );

    const requests = keys.map((key) => ({ path: SERIES_PATH, headers: { authorization: `Bearer ${key}` } }));
    await load(`${base}${SERIES_PATH}`, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, requests });
    const before = await scrapeMetrics(metricsUrl);
    const seriesFigures = await measured(() => load(`${base}${SERIES_PATH}`, { connections: CONNECTIONS, seconds: SECONDS, requests }), cpuOf);
    const after = await scrapeMetrics(metricsUrl);
    const rowsDuringLoad = metricSum(after, 'weave_series_rollup_rows_total') - metricSum(before, 'weave_series_rollup_rows_total');
    const cyclesDuringLoad = metricSum(after, 'weave_publication_seconds_count', { outcome: 'published' }) - metricSum(before, 'weave_publication_seconds_count', { outcome: 'published' });

    const csvRequests = csvKeys.map((key) => ({ path: `${SERIES_PATH}&format=csv`, headers: { authorization: `Bearer ${key}` } }));
    await load(`${base}${SERIES_PATH}&format=csv`, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, requests: csvRequests });
    const csvFigures = await measured(() => load(`${base}${SERIES_PATH}&format=csv`, { connections: CONNECTIONS, seconds: SECONDS, requests: csvRequests }), cpuOf);

    const reportRequests = reportKeys.map((key) => ({ path: REPORT_PATH, headers: { authorization: `Bearer ${key}` } }));
    await load(`${base}${REPORT_PATH}`, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, requests: reportRequests });
    const reportFigures = await measured(() => load(`${base}${REPORT_PATH}`, { connections: CONNECTIONS, seconds: SECONDS, requests: reportRequests }), cpuOf);

    const ceilingUrl = `${base}/health/live`;
    await load(ceilingUrl, { connections: CONNECTIONS, seconds: WARMUP_SECONDS });
    const ceilingFigures = await measured(() => load(ceilingUrl, { connections: CONNECTIONS, seconds: SECONDS }), cpuOf);

    for (const child of children.splice(0).reverse()) await child.stop();

    // Rows one series computation reads (the publication computes every registered series this way, per cycle).
    reportingDb = new DataSource({ type: 'postgres', url: db.url, poolSize: 1 });
    await reportingDb.initialize();
    const processedThrough = new Date(sample.processed_through);
    // What a publication adds per cycle: every series of every platform (9 per platform and traffic), as runCycle reads them.
    const builder = new SeriesBuilder(reportingDb, new SeriesQueryRepository());
    const everySeries = [...Array.from({ length: PLATFORMS }, (_, p) => agentOf(p)), DENSE_AGENT].flatMap((agentId) =>
      TIME_RANGES.flatMap((timeRange) => SERIES_GRANULARITIES.filter((g) => isGranularityAllowed(timeRange, g)).map((granularity) => ({ agentId, traffic: 'live', timeRange, granularity }))),
    );
    const builds: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      await reportingDb.transaction('REPEATABLE READ', (manager) => builder.build(everySeries, processedThrough, new Date(), manager));
      builds.push(performance.now() - started);
    }
    const explained = [
      await explainSeries(reportingDb, agentOf(0), zoneOf(0), processedThrough),
      await explainSeries(reportingDb, agentOf(PLATFORMS - 1), zoneOf(PLATFORMS - 1), processedThrough),
      await explainSeries(reportingDb, DENSE_AGENT, 'Asia/Kathmandu', processedThrough),
    ];

    console.log('');
    console.log(`GET ${SERIES_PATH}, ${CONNECTIONS} connections looping over ${PLATFORMS} platforms' keys, ${SECONDS} s (after ${WARMUP_SECONDS} s warm-up):`);
    console.log(`  JSON: ${describeLoad(seriesFigures)}`);
    console.log(`  ${describeCpu(seriesFigures.cpu)}`);
    console.log(`  ${verdict(seriesFigures)}`);
    console.log(
      `  rollup rows read per request: ${rowsDuringLoad === 0 ? '0' : (rowsDuringLoad / seriesFigures.total).toFixed(3)} ` +
        `(answered from published snapshots in memory: the gateway's series cache, else reporting-projection's; weave_series_rollup_rows_total moved by ` +
        `${fmt(rowsDuringLoad)} during the load, ${fmt(cyclesDuringLoad)} publication cycle${cyclesDuringLoad === 1 ? '' : 's'} ran)`,
    );
    console.log(`  CSV (format=csv): ${describeLoad(csvFigures)}`);
    console.log(`  ${describeCpu(csvFigures.cpu)}`);
    console.log(`for comparison, same gateway and platforms (their own keys): GET ${REPORT_PATH} (the report read: a NATS round trip to reporting-projection per request):`);
    console.log(`  ${describeLoad(reportFigures)}`);
    console.log(`  ${describeCpu(reportFigures.cpu)}`);
    console.log(`ceiling: GET /health/live of the same gateway (no authentication, no I/O):`);
    console.log(`  ${describeLoad(ceilingFigures)}`);
    console.log(`  the JSON series reaches ${((100 * seriesFigures.rps) / ceilingFigures.rps).toFixed(0)} % of the ceiling's req/s, ${((100 * seriesFigures.rps) / reportFigures.rps).toFixed(0)} % of the report read's`);
    console.log('');
    console.log(`rollup rows read per series computation (90d by day, EXPLAIN ANALYZE of SeriesQueryRepository.buildScans; a naive minute query reads 129,600):`);
    for (const e of explained) {
      console.log(`  ${e.agentId} (${e.zone}${e.agentId === DENSE_AGENT ? ', a row in every minute' : ''}): ${e.buckets} buckets, ${fmt(e.total)} rows = ${fmt(e.days)} day + ${fmt(e.hours)} hour + ${fmt(e.minutes)} minute`);
    }
    console.log(
      `every series of the ${PLATFORMS + 1} platforms (${everySeries.length}: 6 ranges by day, today/1d/7d also by hour), as one publication computes them: ` +
        `${builds.map((ms) => `${fmt(ms)} ms`).join(', ')} (3 runs), ${fmt(builder.lastRowsRead)} rollup rows, ${fmt(builder.lastRowsRead / everySeries.length)} per series`,
    );
    console.log(`EXPLAIN ANALYZE of the minute statement of ${DENSE_AGENT}:`);
    for (const line of explained[2].plan) console.log(`  ${line}`);
  } finally {
    for (const child of children.reverse()) await child.stop();
    if (identityDb?.isInitialized) await identityDb.destroy();
    if (reportingDb?.isInitialized) await reportingDb.destroy();
    await nats.stop();
    await db.drop();
  }
}

await main();
