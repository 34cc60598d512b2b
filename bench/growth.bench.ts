/**
 * Growth benchmark (DESIGN §10): does ingest and reading slow down as the reporting store fills?
 * For each size, a fresh database is filled as fast as PostgreSQL allows with the rows that
 * `size` events would have left (INSERT … SELECT generate_series straight into the weekly
 * partitions, the rollups and the breakdown rows: GROWTH_PLATFORMS platforms × live/test, created
 * over the last GROWTH_DAYS days, inside the restatement window, each recommendation naming one of
 * INGEST_ADS ads per platform and its product; the fill is checked: every breakdown sums to the
 * rollups per platform, else it throws), then:
 *   - the streaming workload of bench:ingest (GROWTH_EVENTS events) is ingested through JetStream
 *     by reporting-projection (in this process), beside the bare consumer of the same run;
 *   - a publication cycle is timed (it reads the rollups of every registered scope);
 *   - the same cycle again with the 120 breakdown scopes of those platforms registered too;
 *   - the report, series and breakdown RPCs the gateway uses (`reporting.v1.report.get`,
 *     `reporting.v1.series.get`, `reporting.v1.breakdown.get` by ad and by product) are asked
 *     GROWTH_READS times each over 20 platforms' scopes, one at a time, for their p50/p99;
 *   - the breakdowns are checked against the rollups again, after the ingest.
 * Printed per size beside the empty store: throughput (and its ratio to the bare consumer), CPU
 * per event, publication times, read p99, and the store's bytes per event, in all and per table
 * group (recommendation, accounting_entry, minute+quarter rollups, hour+day rollups, breakdown,
 * rest).
 * Targets: throughput at the largest size ≥ 0.8 of the empty store's; report and series p99 ≤ 1.5×.
 *
 *   npm run bench:growth                          GROWTH_SIZES=0,5e6,10e6,20e6 GROWTH_EVENTS=200000
 *   GROWTH_SIZES=0,200000 GROWTH_EVENTS=20000 GROWTH_READS=200 npm run bench:growth   (a smoke run)
 *   GROWTH_KEEP=1                                 keeps each size's database (its URL printed)
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
/** Leaves each size's database in place (its URL printed) to be looked into. */
const KEEP = process.env.GROWTH_KEEP === '1';
const BATCH = Number(process.env.INGEST_BATCH_SIZE ?? new ReportingProjectionEnv().INGEST_BATCH_SIZE);
const TARGET_THROUGHPUT = 0.8;
const TARGET_P99 = 1.5;
/** Per recommendation of the ingest workloads: 4.68 lifecycle events and 0.52 accounting entries. */
const EVENTS_PER_RECOMMENDATION = 5.2;
const COUNTERS = `exposures, clicks, engagements, conversions, earnings_micros, earnings_excluded_recommendations,
  pending_earnings_recommendations, accounting_review_required`;

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');

/** Ads each platform shows, as bench:ingest's streaming events name them (INGEST_ADS, default 10,000): `ad_<k>`, a product per 5 ads (`prod_<k / 5>`). */
const ADS = Number(process.env.INGEST_ADS ?? 10_000);
const FIGURES = 'exposures, clicks, engagements, conversions, earnings_micros';
const EPOCH = `timestamptz '1970-01-01 00:00:00+00'`;
/**
 * A recommendation's contribution to its rollups (rules/counting.ts contributionOf), in SQL over
 * reporting.recommendation: exposures from shown on, clicks from clicked on, engaged and
 * converted exclusive, earnings those of its USD entries unless one is foreign (then excluded
 * whole), pending when billable with no attributed entry yet.
 */
const CONTRIBUTION = `count(*) FILTER (WHERE level >= 1) AS exposures, count(*) FILTER (WHERE level >= 2) AS clicks,
  count(*) FILTER (WHERE level = 3) AS engagements, count(*) FILTER (WHERE level = 4) AS conversions,
  coalesce(sum(attributed_usd_micros) FILTER (WHERE foreign_currency_entries = 0), 0) AS earnings_micros,
  count(*) FILTER (WHERE foreign_currency_entries > 0) AS earnings_excluded_recommendations,
  count(*) FILTER (WHERE billable AND attributed_entries = 0) AS pending_earnings_recommendations, 0 AS accounting_review_required`;
/** Not all of these columns zero (no delta writes such a row). */
const nonZero = (columns: string) =>
  columns
    .split(',')
    .map((c) => `${c.trim()} <> 0`)
    .join(' OR ');

interface Filled {
  seconds: number;
  recommendations: number;
  breakdownRows: number;
  /** Seconds per step of the fill. */
  steps: Record<string, number>;
}

/**
 * The rows `size` events leave: one recommendation per 5.2 events (levels, billable and
 * attribution varied), one accounting entry per 10 events (each for a stored recommendation,
 * recorded a minute after it), the minute, hour and day rollups summed from them, and their
 * breakdown rows. Each recommendation names an ad and its product the way bench:ingest's
 * streaming events do: `ad_<k>` out of ADS per platform, skewed as ad serving is (k = ADS × u³,
 * u a uniform hash of the recommendation: a few ads in many recommendations, most in few), and
 * `prod_<k / 5>`. breakdown_pair holds, per (platform, traffic, hour of creation, ad, product),
 * the five figures summed from the recommendations' contributions (what BreakdownDeltas leaves
 * for recommendations in their final state; rows whose figures are all zero are never written).
 * The platforms include the 20 of the streaming workload (`agent_0` …), so it lands on rollup
 * and breakdown rows and partitions that are already full.
 */
async function fill(url: string, size: number): Promise<Filled> {
  const recommendations = Math.round(size / EVENTS_PER_RECOMMENDATION);
  const entries = Math.round(size / 10);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const started = Date.now();
  const steps: Record<string, number> = {};
  const step = async (name: string, run: () => Promise<unknown>) => {
    const at = Date.now();
    await run();
    steps[name] = (Date.now() - at) / 1000;
  };
  try {
    await client.query(`SET synchronous_commit = off`);
    await client.query(`SET TIME ZONE 'UTC'`);
    // Up to yesterday, so that the streaming workload's days overlap the newest ones.
    const endMs = Date.now() - 86_400_000;
    const startMs = endMs - STORE_DAYS * 86_400_000;
    const weeks = [new Date(startMs).toISOString(), new Date(endMs).toISOString()];
    const weekSeries = `array(SELECT generate_series($1::timestamptz, $2::timestamptz + interval '14 days', interval '7 days'))`;
    await client.query(`SELECT reporting.ensure_partitions(${weekSeries}), reporting.ensure_breakdown_partitions(${weekSeries})`, weeks);
    if (recommendations === 0) return { seconds: 0, recommendations, breakdownRows: 0, steps };
    const stepMs = (endMs - startMs) / recommendations;
    await step('recommendations', () =>
      client.query(
        `INSERT INTO reporting.recommendation (recommendation_id, agent_id, traffic, created_at, level, billable,
           attributed_entries, attributed_usd_micros, foreign_currency_entries, ad_id, product_id)
         SELECT 'rec_store_' || i, 'agent_' || (i % $2), CASE WHEN i % 7 = 0 THEN 'test' ELSE 'live' END,
                to_timestamp(($3::float8 + i * $4::float8) / 1000), (i % 5)::smallint, i % 9 = 0,
                CASE WHEN i % 19 < 10 THEN 1 ELSE 0 END, CASE WHEN i % 19 < 10 THEN 1000 + i % 5000 ELSE 0 END, 0,
                'ad_' || ad, 'prod_' || ad / 5
           FROM generate_series(0, $1 - 1) AS i,
                LATERAL (SELECT floor($5 * power((hashint8(i)::float8 + 2147483648) / 4294967296, 3))::int AS ad) AS a`,
        [recommendations, STORE_PLATFORMS, startMs, stepMs, ADS],
      ),
    );
    await step('entries', () =>
      client.query(
        `INSERT INTO reporting.accounting_entry (entry_id, agent_id, traffic, recommendation_id, amount_micros, currency, recorded_at, attributed)
         SELECT 'entry_store_' || j, 'agent_' || (i % $2), CASE WHEN i % 7 = 0 THEN 'test' ELSE 'live' END, 'rec_store_' || i,
                1000 + i % 5000, 'USD', to_timestamp(($3::float8 + i * $4::float8 + 60000) / 1000), true
           FROM generate_series(0, $1 - 1) AS j, LATERAL (SELECT (j::bigint * $5 / $1)::bigint AS i) AS k`,
        [entries, STORE_PLATFORMS, startMs, stepMs, recommendations],
      ),
    );
    await step('rollups', async () => {
      for (const grain of ['minute', 'hour', 'day']) {
        await client.query(
          `INSERT INTO reporting.rollup_${grain} (agent_id, traffic, bucket, ${COUNTERS})
           SELECT agent_id, traffic, bucket, ${COUNTERS}
             FROM (SELECT agent_id, traffic, date_bin('1 ${grain}', created_at, ${EPOCH}) AS bucket, ${CONTRIBUTION}
                     FROM reporting.recommendation GROUP BY 1, 2, 3) AS c
            WHERE ${nonZero(COUNTERS)}`,
        );
      }
    });
    let breakdownRows = 0;
    await step('breakdown', async () => {
      // In hour order, as live traffic writes them.
      const inserted = await client.query(
        `INSERT INTO reporting.breakdown_pair (agent_id, traffic, bucket, ad_id, product_id, ${FIGURES})
         SELECT agent_id, traffic, bucket, ad_id, product_id, ${FIGURES}
           FROM (SELECT agent_id, traffic, date_bin('1 hour', created_at, ${EPOCH}) AS bucket, coalesce(ad_id, '') AS ad_id,
                        coalesce(product_id, '') AS product_id, ${CONTRIBUTION}
                   FROM reporting.recommendation GROUP BY 1, 2, 3, 4, 5) AS c
          WHERE ${nonZero(FIGURES)}
          ORDER BY bucket, agent_id, traffic, ad_id, product_id`,
      );
      breakdownRows = inserted.rowCount ?? 0;
    });
    await step('vacuum analyze', () => client.query(`VACUUM ANALYZE`));
    await step('check', () => checkBreakdowns(client, 'the fill'));
    return { seconds: (Date.now() - started) / 1000, recommendations, breakdownRows, steps };
  } finally {
    await client.end();
  }
}

/**
 * The identity the breakdowns keep (DESIGN §9: every breakdown sums to its Report): per platform
 * and traffic, the five figures summed over breakdown_pair, breakdown_archive and breakdown_rollup equal those of
 * rollup_hour and of rollup_day; and every filled recommendation names an ad and a product.
 * Throws when they differ.
 */
async function checkBreakdowns(client: pg.Client, after: string): Promise<void> {
  const per = (from: string) => `SELECT agent_id, traffic, ${FIGURES.split(', ')
    .map((c) => `sum(${c})::text AS ${c}`)
    .join(', ')} FROM (${from}) t GROUP BY 1, 2`;
  const tables = {
    breakdown: per(`SELECT agent_id, traffic, ${FIGURES} FROM reporting.breakdown_pair UNION ALL SELECT agent_id, traffic, ${FIGURES} FROM reporting.breakdown_archive UNION ALL SELECT agent_id, traffic, ${FIGURES} FROM reporting.breakdown_rollup WHERE dimension = 'ad'`),
    'product breakdown': per(`SELECT agent_id, traffic, ${FIGURES} FROM reporting.breakdown_pair UNION ALL SELECT agent_id, traffic, ${FIGURES} FROM reporting.breakdown_archive UNION ALL SELECT agent_id, traffic, ${FIGURES} FROM reporting.breakdown_rollup WHERE dimension = 'product'`),
    rollup_hour: per(`SELECT agent_id, traffic, ${FIGURES} FROM reporting.rollup_hour`),
    rollup_day: per(`SELECT agent_id, traffic, ${FIGURES} FROM reporting.rollup_day`),
  };
  const sums = new Map<string, string>();
  for (const [name, query] of Object.entries(tables)) {
    const { rows } = await client.query<Record<string, string>>(`${query} ORDER BY agent_id COLLATE "C", traffic COLLATE "C"`);
    sums.set(name, JSON.stringify(rows));
  }
  const reference = sums.get('rollup_hour')!;
  const differing = [...sums].filter(([, json]) => json !== reference).map(([name]) => name);
  if (differing.length > 0) throw new Error(`after ${after}: the figures per platform of ${differing.join(', ')} differ from rollup_hour's`);
  const {
    rows: [{ unnamed }],
  } = await client.query<{ unnamed: string }>(`SELECT count(*) AS unnamed FROM reporting.recommendation WHERE recommendation_id LIKE 'rec\\_store\\_%' AND (ad_id IS NULL OR product_id IS NULL)`);
  if (Number(unnamed) > 0) throw new Error(`after ${after}: ${unnamed} filled recommendations name no ad or product`);
}

/** The store's tables in the groups the sizing is written from; a partition counts in its parent's. */
const TABLE_GROUPS: readonly { name: string; tables: readonly string[] }[] = [
  { name: 'recommendation', tables: ['recommendation'] },
  { name: 'accounting_entry', tables: ['accounting_entry'] },
  { name: 'minute+quarter', tables: ['rollup_minute', 'rollup_quarter'] },
  { name: 'hour+day', tables: ['rollup_hour', 'rollup_day'] },
  { name: 'breakdown', tables: ['breakdown_pair', 'breakdown_archive', 'breakdown_rollup'] },
];
const REST = 'rest';

type Latency = { p50: number; p99: number };

interface SizeResult {
  size: number;
  rate: number;
  bare: number;
  node: string;
  postgres: string;
  publicationMs: number;
  /** The same cycle with the breakdown scopes registered too. */
  publicationWithBreakdownsMs: number;
  report: Latency;
  series: Latency;
  breakdownByAd: Latency;
  breakdownByProduct: Latency;
  bytesPerEvent: number;
  /** Bytes per event of each TABLE_GROUPS group, then REST. */
  groupBytesPerEvent: Map<string, number>;
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
    console.log(
      `  filled: ${fmt(filled.recommendations)} recommendations over ${STORE_PLATFORMS} platforms and ${STORE_DAYS} days (naming ${fmt(ADS)} ads per platform), with their entries, rollups and ${fmt(filled.breakdownRows)} breakdown rows, in ${filled.seconds.toFixed(1)} s (` +
        Object.entries(filled.steps)
          .map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`)
          .join(', ') +
        ')',
    );
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
      const breakdowns = (by: 'ad' | 'product') =>
        agents.flatMap((agent_id) =>
          (['7d', '30d', '90d'] as const).flatMap((time_range) =>
            [
              [20, 'earnings_micros'],
              [100, 'exposures'],
            ].map(([limit, sort]) => ({ agent_id, traffic: 'live', time_range, by, limit, sort })),
          ),
        );
      const byAd = breakdowns('ad');
      const byProduct = breakdowns('product');
      // Registers every report and series scope (the first answer is a PreparingReport), then times one full cycle.
      for (const request of reports) await firstValueFrom(rpc.send<ReportReply>(RpcSubjects.reportGet, request));
      for (const request of series) await firstValueFrom(rpc.send<ReportReply>(RpcSubjects.seriesGet, request));
      const publication = service.app.get(PublicationService);
      let cycleStarted = performance.now();
      await publication.runCycle(true);
      const publicationMs = performance.now() - cycleStarted;
      for (const request of reports) await ready(rpc, RpcSubjects.reportGet, request);
      for (const request of series) await ready(rpc, RpcSubjects.seriesGet, request);
      // Then the breakdown scopes (each prepared at once on its first request), and the cycle again with them.
      for (const request of [...byAd, ...byProduct]) await ready(rpc, RpcSubjects.breakdownGet, request);
      cycleStarted = performance.now();
      await publication.runCycle(true);
      const publicationWithBreakdownsMs = performance.now() - cycleStarted;
      const report = await timedReads(rpc, RpcSubjects.reportGet, reports);
      const seriesTimes = await timedReads(rpc, RpcSubjects.seriesGet, series);
      const breakdownByAd = await timedReads(rpc, RpcSubjects.breakdownGet, byAd);
      const breakdownByProduct = await timedReads(rpc, RpcSubjects.breakdownGet, byProduct);
      console.log(
        `  publication cycle (${reports.length} report and ${series.length} series scopes): ${publicationMs.toFixed(0)} ms; with ${byAd.length / 2 + byProduct.length / 2} breakdown scopes too: ${publicationWithBreakdownsMs.toFixed(0)} ms`,
      );
      console.log(
        `  RPC p50 / p99 (${fmt(READS)} each, one at a time): report ${report.p50.toFixed(2)} / ${report.p99.toFixed(2)} ms; series ${seriesTimes.p50.toFixed(2)} / ${seriesTimes.p99.toFixed(2)} ms; ` +
          `breakdown by ad ${breakdownByAd.p50.toFixed(2)} / ${breakdownByAd.p99.toFixed(2)} ms; by product ${breakdownByProduct.p50.toFixed(2)} / ${breakdownByProduct.p99.toFixed(2)} ms`,
      );

      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      let tables: { root: string; bytes: string }[];
      try {
        await checkBreakdowns(client, 'the ingest');
        ({ rows: tables } = await client.query<{ root: string; bytes: string }>(
          `SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text AS root, sum(pg_total_relation_size(c.oid)) AS bytes
             FROM pg_class c WHERE c.relnamespace = 'reporting'::regnamespace AND c.relkind IN ('r', 'm') GROUP BY 1`,
        ));
      } finally {
        await client.end();
      }
      const events = size + total;
      const groupBytes = new Map<string, number>([...TABLE_GROUPS.map(({ name }) => [name, 0] as [string, number]), [REST, 0]]);
      let bytes = 0;
      for (const { root, bytes: b } of tables) {
        const table = root.replace(/^reporting\./, '');
        const group = TABLE_GROUPS.find(({ tables: names }) => names.includes(table))?.name ?? REST;
        groupBytes.set(group, groupBytes.get(group)! + Number(b));
        bytes += Number(b);
      }
      const bytesPerEvent = bytes / events;
      const groupBytesPerEvent = new Map([...groupBytes].map(([name, b]) => [name, b / events]));
      console.log(
        `  store: ${(bytes / 2 ** 20).toFixed(0)} MiB = ${fmt(bytesPerEvent)} bytes per event (${fmt(events)} events' worth; every table and partition of the reporting schema): ` +
          [...groupBytes].map(([name, b]) => `${name} ${(b / 2 ** 20).toFixed(0)} MiB = ${fmt(b / events)} B`).join(', '),
      );
      return {
        size,
        rate,
        bare: bare.rate,
        node: perEvent(cpu.node, applied),
        postgres: perEvent(cpu.postgres, applied),
        publicationMs,
        publicationWithBreakdownsMs,
        report,
        series: seriesTimes,
        breakdownByAd,
        breakdownByProduct,
        bytesPerEvent,
        groupBytesPerEvent,
      };
    } finally {
      await service.close();
    }
  } finally {
    await connection?.drain();
    await nats.stop();
    if (KEEP) console.log(`  kept: ${db.url}`);
    else await db.drop();
  }
}

async function main() {
  const keepAlive = setInterval(() => undefined, 1000);
  console.log(`machine: ${machine()}`);
  console.log(
    `sizes ${SIZES.map(fmt).join(', ')} events' worth; then ${fmt(EVENTS)} streaming events ingested (batch ${BATCH}); ${fmt(READS)} reads each of report, series and breakdown by ad and by product; load average ${load()}`,
  );
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await measure(size));
  const base = results[0];
  const times = (r: Latency, b: Latency) => `${r.p99.toFixed(2)} ms (${(r.p99 / b.p99).toFixed(2)}×)`.padStart(16);
  console.log(`\n(relative to the first size, ${fmt(base.size)}; publication: reports and series / with breakdowns too)`);
  console.log('store events   ingest ev/s  vs first  /bare  Node/ev   PG/ev     publication      report p99        series p99        by ad p99         by product p99    bytes/event');
  for (const r of results) {
    console.log(
      `${fmt(r.size).padStart(12)}  ${fmt(r.rate).padStart(11)}  ${(r.rate / base.rate).toFixed(2).padStart(8)}  ${(r.rate / r.bare).toFixed(2).padStart(5)}  ${r.node.padStart(8)}  ${r.postgres.padStart(8)}  ` +
        `${`${r.publicationMs.toFixed(0)} / ${r.publicationWithBreakdownsMs.toFixed(0)} ms`.padStart(15)}  ${times(r.report, base.report)}  ${times(r.series, base.series)}  ` +
        `${times(r.breakdownByAd, base.breakdownByAd)}  ${times(r.breakdownByProduct, base.breakdownByProduct)}  ${fmt(r.bytesPerEvent).padStart(11)}`,
    );
  }
  const names = [...base.groupBytesPerEvent.keys()];
  console.log(`\nbytes per event by table group (a partition counts in its parent's; indexes and TOAST included)`);
  console.log(`store events  ${names.map((name) => name.padStart(16)).join('  ')}  ${'total'.padStart(8)}`);
  for (const r of results) {
    console.log(`${fmt(r.size).padStart(12)}  ${names.map((name) => fmt(r.groupBytesPerEvent.get(name)!).padStart(16)).join('  ')}  ${fmt(r.bytesPerEvent).padStart(8)}`);
  }
  const last = results[results.length - 1];
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `targets at ${fmt(last.size)}: throughput ≥ ${TARGET_THROUGHPUT} of the first size's: ${met(last.rate / base.rate >= TARGET_THROUGHPUT)}; ` +
      `report p99 ≤ ${TARGET_P99}×: ${met(last.report.p99 / base.report.p99 <= TARGET_P99)}; series p99 ≤ ${TARGET_P99}×: ${met(last.series.p99 / base.series.p99 <= TARGET_P99)}; ` +
      `(not a target) breakdown p99 by ad ${(last.breakdownByAd.p99 / base.breakdownByAd.p99).toFixed(2)}×, by product ${(last.breakdownByProduct.p99 / base.breakdownByProduct.p99).toFixed(2)}×`,
  );
  console.log(`load average (1, 5, 15 min): ${load()}`);
  clearInterval(keepAlive);
}

await main();
