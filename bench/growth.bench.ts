/**
 * Growth benchmark (DESIGN §10): does ingest and reading slow down as the reporting store fills?
 * For each size, a fresh database is filled as fast as PostgreSQL allows with the rows that
 * `size` events would have left (INSERT … SELECT generate_series straight into the weekly
 * partitions and the rollups: GROWTH_PLATFORMS platforms × live/test, created over the last
 * GROWTH_DAYS days, inside the restatement window), then:
 *   - the streaming workload of bench:ingest (GROWTH_EVENTS events) is ingested through JetStream
 *     by reporting-projection (in this process), beside the bare consumer of the same run;
 *   - a publication cycle is timed (it reads the rollups of every registered scope);
 *   - the report and series RPCs the gateway uses (`reporting.v1.report.get`,
 *     `reporting.v1.series.get`) are asked GROWTH_READS times each over 20 platforms' scopes,
 *     one at a time, for their p50/p99.
 * Printed per size beside the empty store: throughput (and its ratio to the bare consumer), CPU
 * per event, publication time, read p99, and the store's bytes per event.
 * Targets: throughput at the largest size ≥ 0.8 of the empty store's; report and series p99 ≤ 1.5×.
 *
 *   npm run bench:growth                          GROWTH_SIZES=0,5e6,10e6,20e6 GROWTH_EVENTS=200000
 *   GROWTH_SIZES=0,200000 GROWTH_EVENTS=20000 GROWTH_READS=200 npm run bench:growth   (a smoke run)
 */
import { loadavg } from 'node:os';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, type ReportReply } from '#libs/contracts';
import { NatsRpcClient } from '#libs/nats';
import { PublicationService } from '../apps/reporting-projection/src/publication/publication.service.js';
import { ReportingProjectionEnv } from '../apps/reporting-projection/src/config/reporting-projection.env.js';
import { newTestDatabase, startNats, startReportingProjection, waitFor } from '../test/support/index.js';
import { CpuMeter, perEvent, prepublish, runBare, settledMessages } from './ingest-support.js';
import { PLATFORMS, streamingWorkload } from './ingest-workloads.js';
import { fmt, machine, percentile } from './support.js';

const SIZES = (process.env.GROWTH_SIZES ?? '0,5e6,10e6,20e6').split(',').map(Number);
const EVENTS = Number(process.env.GROWTH_EVENTS ?? 200_000);
const STORE_PLATFORMS = Number(process.env.GROWTH_PLATFORMS ?? 200);
const STORE_DAYS = Number(process.env.GROWTH_DAYS ?? 112);
const READS = Number(process.env.GROWTH_READS ?? 1000);
const BATCH = Number(process.env.INGEST_BATCH_SIZE ?? new ReportingProjectionEnv().INGEST_BATCH_SIZE);
const TARGET_THROUGHPUT = 0.8;
const TARGET_P99 = 1.5;
/** Per recommendation of the ingest workloads: 4.68 lifecycle events and 0.52 accounting entries. */
const EVENTS_PER_RECOMMENDATION = 5.2;
const COUNTERS = `exposures, clicks, engagements, conversions, earnings_micros, earnings_excluded_recommendations,
  pending_earnings_recommendations, accounting_review_required`;

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');

/**
 * The rows `size` events leave: one recommendation per 5.2 events (levels, billable and
 * attribution varied), one accounting entry per 10 events (each for a stored recommendation,
 * recorded a minute after it), and the minute, hour and day rollups summed from them. The
 * platforms include the 20 of the streaming workload (`agent_0` …), so it lands on rollup rows
 * and partitions that are already full.
 */
async function fill(url: string, size: number): Promise<{ seconds: number; recommendations: number }> {
  const recommendations = Math.round(size / EVENTS_PER_RECOMMENDATION);
  const entries = Math.round(size / 10);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const started = Date.now();
  try {
    await client.query(`SET synchronous_commit = off`);
    // Up to yesterday, so that the streaming workload's days overlap the newest ones.
    const endMs = Date.now() - 86_400_000;
    const startMs = endMs - STORE_DAYS * 86_400_000;
    await client.query(`SELECT reporting.ensure_partitions(array(SELECT generate_series($1::timestamptz, $2::timestamptz + interval '14 days', interval '7 days')))`, [
      new Date(startMs).toISOString(),
      new Date(endMs).toISOString(),
    ]);
    if (recommendations === 0) return { seconds: 0, recommendations };
    const stepMs = (endMs - startMs) / recommendations;
    await client.query(
      `INSERT INTO reporting.recommendation (recommendation_id, agent_id, traffic, created_at, level, billable,
         attributed_entries, attributed_usd_micros, foreign_currency_entries)
       SELECT 'rec_store_' || i, 'agent_' || (i % $2), CASE WHEN i % 7 = 0 THEN 'test' ELSE 'live' END,
              to_timestamp(($3::float8 + i * $4::float8) / 1000), (i % 5)::smallint, i % 9 = 0,
              CASE WHEN i % 19 < 10 THEN 1 ELSE 0 END, CASE WHEN i % 19 < 10 THEN 1000 + i % 5000 ELSE 0 END, 0
         FROM generate_series(0, $1 - 1) AS i`,
      [recommendations, STORE_PLATFORMS, startMs, stepMs],
    );
    await client.query(
      `INSERT INTO reporting.accounting_entry (entry_id, agent_id, traffic, recommendation_id, amount_micros, currency, recorded_at, attributed)
       SELECT 'entry_store_' || j, 'agent_' || (i % $2), CASE WHEN i % 7 = 0 THEN 'test' ELSE 'live' END, 'rec_store_' || i,
              1000 + i % 5000, 'USD', to_timestamp(($3::float8 + i * $4::float8 + 60000) / 1000), true
         FROM generate_series(0, $1 - 1) AS j, LATERAL (SELECT (j::bigint * $5 / $1)::bigint AS i) AS k`,
      [entries, STORE_PLATFORMS, startMs, stepMs, recommendations],
    );
    const sums = `count(*) FILTER (WHERE level >= 1), count(*) FILTER (WHERE level >= 2), count(*) FILTER (WHERE level >= 3),
      count(*) FILTER (WHERE level >= 4), coalesce(sum(attributed_usd_micros) FILTER (WHERE billable), 0), count(*) FILTER (WHERE billable AND attributed_entries = 0),
      count(*) FILTER (WHERE billable AND level < 4), 0`;
    for (const [grain, unit] of [
      ['minute', 'minute'],
      ['hour', 'hour'],
      ['day', 'day'],
    ]) {
      await client.query(
        `INSERT INTO reporting.rollup_${grain} (agent_id, traffic, bucket, ${COUNTERS})
         SELECT agent_id, traffic, date_trunc('${unit}', created_at), ${sums}
           FROM reporting.recommendation GROUP BY 1, 2, 3`,
      );
    }
    await client.query(`VACUUM ANALYZE`);
    return { seconds: (Date.now() - started) / 1000, recommendations };
  } finally {
    await client.end();
  }
}

interface SizeResult {
  size: number;
  rate: number;
  bare: number;
  node: string;
  postgres: string;
  publicationMs: number;
  report: { p50: number; p99: number };
  series: { p50: number; p99: number };
  bytesPerEvent: number;
}

/** Asks `subject` until it answers something other than a PreparingReport. */
async function ready(rpc: NatsRpcClient, subject: string, request: object): Promise<void> {
  await waitFor(
    async () => {
      const reply = await firstValueFrom(rpc.send<ReportReply>(subject, request));
      return reply.status !== 'preparing';
    },
    { timeoutMs: 120_000, intervalMs: 100, what: `${subject} ready` },
  );
}

async function timedReads(rpc: NatsRpcClient, subject: string, requests: object[]): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    const started = performance.now();
    const reply = await firstValueFrom(rpc.send<ReportReply>(subject, requests[i % requests.length]));
    times.push(performance.now() - started);
    if (reply.status === 'preparing') throw new Error(`${subject}: a registered scope answered preparing`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function measure(size: number): Promise<SizeResult> {
  console.log(`\nstore of ${fmt(size)} events' worth of rows; load average ${load()}`);
  const nats = await startNats();
  const db = newTestDatabase();
  let connection: NatsConnection | undefined;
  try {
    // Once for the migrations; the store is then filled and the backlog published with no
    // consumer running, so that the timed run starts on the whole backlog and a full store.
    const settings = { natsUrl: nats.url, databaseUrl: db.url, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000, INGEST_BATCH_SIZE: BATCH };
    await (await startReportingProjection(settings)).close();
    const filled = await fill(db.url, size);
    console.log(`  filled: ${fmt(filled.recommendations)} recommendations over ${STORE_PLATFORMS} platforms and ${STORE_DAYS} days, with their entries and rollups, in ${filled.seconds.toFixed(1)} s`);
    const total = await prepublish(nats.url, streamingWorkload(EVENTS));
    // The settled counter lives in this process, across sizes: counted from here.
    const origin = await settledMessages();
    const service = await startReportingProjection(settings);
    try {
      const meter = new CpuMeter(db.name);
      await meter.start();
      const before = (await settledMessages()) - origin;
      const started = Date.now();
      await waitFor(async () => (await settledMessages()) - origin >= total, { timeoutMs: 60 * 60_000, intervalMs: 20, what: 'projection caught up' });
      const seconds = (Date.now() - started) / 1000;
      // What the consumer settled while the service started is not timed.
      const applied = total - before;
      const cpu = await meter.stop();
      const rate = applied / seconds;
      const bare = await runBare(nats.url, db, total, BATCH);
      console.log(
        `  ingest (streaming): ${fmt(applied)} events in ${seconds.toFixed(1)} s = ${fmt(rate)} events/s; CPU per event: Node ${perEvent(cpu.node, applied)}, PostgreSQL ${perEvent(cpu.postgres, applied)}; bare consumer ${fmt(bare.rate)} events/s (ratio ${(rate / bare.rate).toFixed(2)})`,
      );

      connection = await connect({ servers: nats.url });
      const rpc = new NatsRpcClient({ connection, timeoutMs: 30_000 });
      const agents = Array.from({ length: PLATFORMS }, (_, p) => `agent_${p}`);
      const reports = agents.flatMap((agent_id) => (['7d', '30d', '90d'] as const).map((time_range) => ({ agent_id, traffic: 'live', time_range })));
      const series = agents.flatMap((agent_id) =>
        [
          ['7d', 'hour'],
          ['30d', 'day'],
          ['90d', 'day'],
        ].map(([time_range, granularity]) => ({ agent_id, traffic: 'live', time_range, granularity })),
      );
      // Registers every scope (the first answer is a PreparingReport), then times one full cycle.
      for (const request of reports) await firstValueFrom(rpc.send<ReportReply>(RpcSubjects.reportGet, request));
      for (const request of series) await firstValueFrom(rpc.send<ReportReply>(RpcSubjects.seriesGet, request));
      const publication = service.app.get(PublicationService);
      const cycleStarted = performance.now();
      await publication.runCycle(true);
      const publicationMs = performance.now() - cycleStarted;
      for (const request of reports) await ready(rpc, RpcSubjects.reportGet, request);
      for (const request of series) await ready(rpc, RpcSubjects.seriesGet, request);
      const report = await timedReads(rpc, RpcSubjects.reportGet, reports);
      const seriesTimes = await timedReads(rpc, RpcSubjects.seriesGet, series);
      console.log(
        `  publication cycle (${reports.length} report and ${series.length} series scopes): ${publicationMs.toFixed(0)} ms; ` +
          `report RPC p50 ${report.p50.toFixed(2)} ms, p99 ${report.p99.toFixed(2)} ms; series RPC p50 ${seriesTimes.p50.toFixed(2)} ms, p99 ${seriesTimes.p99.toFixed(2)} ms (${fmt(READS)} each, one at a time)`,
      );

      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const { rows } = await client.query<{ bytes: string }>(
        `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c WHERE c.relnamespace = 'reporting'::regnamespace AND c.relkind IN ('r', 'm')`,
      );
      await client.end();
      const bytesPerEvent = Number(rows[0].bytes) / (size + total);
      console.log(`  store: ${(Number(rows[0].bytes) / 2 ** 20).toFixed(0)} MiB = ${fmt(bytesPerEvent)} bytes per event (${fmt(size + total)} events' worth; every table and partition of the reporting schema)`);
      return {
        size,
        rate,
        bare: bare.rate,
        node: perEvent(cpu.node, applied),
        postgres: perEvent(cpu.postgres, applied),
        publicationMs,
        report,
        series: seriesTimes,
        bytesPerEvent,
      };
    } finally {
      await service.close();
    }
  } finally {
    await connection?.drain();
    await nats.stop();
    await db.drop();
  }
}

async function main() {
  const keepAlive = setInterval(() => undefined, 1000);
  console.log(`machine: ${machine()}`);
  console.log(
    `sizes ${SIZES.map(fmt).join(', ')} events' worth; then ${fmt(EVENTS)} streaming events ingested (batch ${BATCH}); ${fmt(READS)} reads each of report and series; load average ${load()}`,
  );
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await measure(size));
  const base = results[0];
  console.log(`\n(relative to the first size, ${fmt(base.size)})`);
  console.log('store events   ingest ev/s  vs first  /bare  Node/ev   PG/ev     publication  report p99       series p99       bytes/event');
  for (const r of results) {
    console.log(
      `${fmt(r.size).padStart(12)}  ${fmt(r.rate).padStart(11)}  ${(r.rate / base.rate).toFixed(2).padStart(8)}  ${(r.rate / r.bare).toFixed(2).padStart(5)}  ${r.node.padStart(8)}  ${r.postgres.padStart(8)}  ` +
        `${`${r.publicationMs.toFixed(0)} ms`.padStart(11)}  ${`${r.report.p99.toFixed(2)} ms (${(r.report.p99 / base.report.p99).toFixed(2)}×)`.padStart(15)}  ` +
        `${`${r.series.p99.toFixed(2)} ms (${(r.series.p99 / base.series.p99).toFixed(2)}×)`.padStart(15)}  ${fmt(r.bytesPerEvent).padStart(11)}`,
    );
  }
  const last = results[results.length - 1];
  console.log(
    `targets at ${fmt(last.size)}: throughput ≥ ${TARGET_THROUGHPUT} of the first size's: ${last.rate / base.rate >= TARGET_THROUGHPUT ? 'met' : 'NOT met'}; ` +
      `report p99 ≤ ${TARGET_P99}×: ${last.report.p99 / base.report.p99 <= TARGET_P99 ? 'met' : 'NOT met'}; series p99 ≤ ${TARGET_P99}×: ${last.series.p99 / base.series.p99 <= TARGET_P99 ? 'met' : 'NOT met'}`,
  );
  console.log(`load average (1, 5, 15 min): ${load()}`);
  clearInterval(keepAlive);
}

await main();
