/**
 * Ingest benchmark (DESIGN §10): pre-publish a backlog of events to JetStream, then measure
 * the events/s reporting-projection applies until its consumer is caught up; beside it, in the
 * same run and on the same backlog, the ceiling: a bare consumer that fetches, acks and does one
 * unnest upsert per batch. Two workloads (bench/ingest-workloads.ts), each on its own NATS
 * server and database: `streaming` (live traffic: creation-time order with a few minutes of
 * disorder, over days; target ≥ 0.6 of the bare consumer) and `backfill` (30 days, fully
 * shuffled; target ≥ 0.4). The projection runs as deployed, in its own process from dist/: its
 * CPU, and its peak resident set (target ≤ 200 MB), are printed.
 *
 *   npm run bench:ingest                      both workloads, 1,000,000 events each
 *   EVENTS=200000 INGEST_WORKLOAD=backfill npm run bench:ingest
 *   STREAMING_DAYS=3                           days the streaming workload's recommendations span
 *   INGEST_CPU_PROFILE=/tmp/prof npm run bench:ingest   (a .cpuprofile of each projection process)
 *   INGEST_NODE_ARGS='--trace-gc'              flags for the projection's node process, after its own (REPORTING_PROJECTION_NODE_FLAGS; a later flag wins)
 *   INGEST_PROCESS_ENV=0                       start the projection without its process environment (REPORTING_PROJECTION_PROCESS_ENV: glibc's malloc tunables)
 *   INGEST_POLL_MS=500                          how often its progress is read from /metrics
 *   INGEST_MEMORY_TRACE=1                       print the projection's memory at every poll, not only at its peak
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Durables, Streams } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { ReportingProjectionEnv } from '../apps/reporting-projection/src/config/reporting-projection.env.js';
import { freePort, newTestDatabase, startNats, waitFor } from '../test/support/index.js';
import { metricSum, residentMemory, scrapeMetrics, startChild, waitForHttp, type MetricSample } from './harness.js';
import { REPORTING_PROJECTION_NODE_FLAGS, REPORTING_PROJECTION_PROCESS_ENV } from '../apps/reporting-projection/src/config/node-flags.js';
import { CpuMeter, perEvent, prepublish, runBare, type Run } from './ingest-support.js';
import { backfillWorkload, streamingWorkload, type Workload } from './ingest-workloads.js';
import { fmt, machine } from './support.js';

const TOTAL = Number(process.env.EVENTS ?? 1_000_000);
const WORKLOADS = (process.env.INGEST_WORKLOAD ?? 'streaming,backfill').split(',').flatMap((w) => (w === 'both' ? ['streaming', 'backfill'] : [w]));
const defaults = new ReportingProjectionEnv();
const BATCH = Number(process.env.INGEST_BATCH_SIZE ?? defaults.INGEST_BATCH_SIZE);
const CONCURRENCY = Number(process.env.INGEST_CONCURRENCY ?? defaults.INGEST_CONCURRENCY);
const PROFILE_DIR = process.env.INGEST_CPU_PROFILE;
/** Extra flags for the projection's node process (e.g. `--trace-gc`). */
const NODE_ARGS = (process.env.INGEST_NODE_ARGS ?? '').split(' ').filter(Boolean);
/**
 * How often the bench asks the projection's /metrics for its progress. Each scrape renders every
 * metric (the default process metrics too): at 100 ms it took 2–4 % of the projection's CPU.
 */
const POLL_MS = Number(process.env.INGEST_POLL_MS ?? 500);
/** Of the same run's bare consumer (DESIGN §10). */
const TARGET_RATIO: Record<string, number> = { streaming: 0.6, backfill: 0.4 };
const TARGET_RSS_MB = 200;
const MEMORY_TRACE = process.env.INGEST_MEMORY_TRACE === '1';
/** How often the projection's resident set is read from /proc (cheap, unlike a /metrics scrape). */
const RSS_SAMPLE_MS = 50;

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');

/** Messages the projection's consumer settled (applied or dead-lettered) so far, from its /metrics. */
function settledIn(samples: MetricSample[]): number {
  return samples
    .filter((m) => m.name === 'weave_consumer_messages_total' && m.labels.durable === Durables.reportingProjection && m.labels.outcome !== 'retry')
    .reduce((sum, m) => sum + m.value, 0);
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** The projection's resident set split as the kernel counts it: anonymous (heaps, buffers) and file-backed (code). */
async function residentSplit(pid: number): Promise<{ rss: number; anon: number; file: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
}

/** Where the projection's memory is, from its /metrics (prom-client's process metrics, read at the scrape). */
function memoryDetail(samples: MetricSample[]): string {
  const space = (name: string) => metricSum(samples, 'nodejs_heap_space_size_total_bytes', { space: name });
  const used = (name: string) => metricSum(samples, 'nodejs_heap_space_size_used_bytes', { space: name });
  return (
    `heap ${mb(metricSum(samples, 'nodejs_heap_size_total_bytes'))} MB (used ${mb(metricSum(samples, 'nodejs_heap_size_used_bytes'))}: ` +
    `new ${mb(used('new'))}/${mb(space('new'))}, old ${mb(used('old'))}/${mb(space('old'))}, code ${mb(used('code'))}/${mb(space('code'))}, ` +
    `large ${mb(used('large_object'))}/${mb(space('large_object'))}), external ${mb(metricSum(samples, 'nodejs_external_memory_bytes'))} MB`
  );
}

/**
 * reporting-projection as it is deployed: its own process (from dist/), so its CPU and its peak
 * resident set (VmHWM) are its own.
 */
async function runProjection(natsUrl: string, db: { url: string; name: string }, total: number, workload: string): Promise<Run & { rows: Record<string, string | number>; maxRssMb: number; timed: number }> {
  const launched = Date.now();
  const port = await freePort();
  const nodeArgs = [
    ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=projection-${workload}.cpuprofile`] : []),
    ...REPORTING_PROJECTION_NODE_FLAGS,
    ...NODE_ARGS,
  ];
  const child = startChild(
    'reporting-projection',
    'dist/apps/reporting-projection/src/main.js',
    {
      NATS_URL: natsUrl,
      DATABASE_URL: db.url,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      REPORTING_HTTP_PORT: port,
      REPORTING_PUBLISH_INTERVAL_MS: 3_600_000,
      INGEST_BATCH_SIZE: BATCH,
      INGEST_CONCURRENCY: CONCURRENCY,
      ...(process.env.INGEST_PROCESS_ENV === '0' ? {} : REPORTING_PROJECTION_PROCESS_ENV),
    },
    [],
    nodeArgs,
  );
  // The resident set sampled often, to tell when its peak falls; the heap's detail is the one
  // of the first /metrics scrape after it (a scrape renders every metric: too costly every 50 ms).
  let top = { rss: 0, anon: 0, file: 0, at: 0 };
  let topDetail = '';
  let sampling = true;
  const sampler = (async () => {
    while (sampling && child.process.exitCode === null) {
      try {
        const now = await residentSplit(child.process.pid!);
        if (now.rss > top.rss) top = { ...now, at: Date.now() };
      } catch {
        // the process is exiting
      }
      await new Promise((r) => setTimeout(r, RSS_SAMPLE_MS));
    }
  })();
  try {
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, { child });
    const ready = await residentSplit(child.process.pid!);
    const metrics = `http://127.0.0.1:${port}/metrics`;
    const meter = new CpuMeter(db.name, child.process.pid);
    await meter.start();
    const started = Date.now();
    // Progress from the consumer's own counter: on nats-server 2.9.10 every consumer info call
    // recalculates num_pending, which on a shuffled backlog stalls the pending pull for seconds
    // (fixed upstream in 2.9.15), so the bench asks only at the end.
    // The consumer starts before it reports ready: what it settled by then is not timed.
    const first = await scrapeMetrics(metrics);
    const before = settledIn(first);
    console.log(`    memory at ready (its consumer already applying): RSS ${mb(ready.rss)} MB (anonymous ${mb(ready.anon)}, file ${mb(ready.file)}); ${memoryDetail(first)}`);
    let last = 0;
    let topSeen = 0;
    await waitFor(
      async () => {
        const samples = await scrapeMetrics(metrics);
        const settled = settledIn(samples);
        if (top.rss > topSeen) {
          topSeen = top.rss;
          topDetail = `${((top.at - started) / 1000).toFixed(1)} s in, ${fmt(settled)} settled: ${memoryDetail(samples)}`;
        }
        if (MEMORY_TRACE) {
          const now = await residentSplit(child.process.pid!);
          console.log(`    ${((Date.now() - started) / 1000).toFixed(1)} s: RSS ${mb(now.rss)} MB (anonymous ${mb(now.anon)}), ${memoryDetail(samples)}`);
        }
        if (settled - last >= 200_000) {
          last = settled;
          console.log(`    applied ${fmt(settled)} / ${fmt(total)} (${fmt((settled - before) / ((Date.now() - started) / 1000))} events/s)`);
        }
        return settled >= total;
      },
      { timeoutMs: 30 * 60_000, intervalMs: POLL_MS, what: 'projection caught up' },
    );
    const seconds = (Date.now() - started) / 1000;
    const cpu = await meter.stop();
    const memory = await residentMemory(child);
    // Caught up: what it keeps once idle again (a scavenge or two may still be due).
    await new Promise((r) => setTimeout(r, 2000));
    const idle = await residentSplit(child.process.pid!);
    console.log(`    memory: peak RSS ${mb(memory.peak)} MB; highest sample ${mb(top.rss)} MB (anonymous ${mb(top.anon)}, file ${mb(top.file)}) ${topDetail}`);
    console.log(`    memory idle after catching up: RSS ${mb(idle.rss)} MB (anonymous ${mb(idle.anon)}); ${memoryDetail(await scrapeMetrics(metrics))}`);
    const inspector = await NatsClient.connect({ servers: [natsUrl], name: 'bench-inspector' });
    const info = await inspector.manager.consumers.info(Streams.events, Durables.reportingProjection);
    if (info.num_pending !== 0 || info.num_ack_pending !== 0) throw new Error(`not caught up: ${info.num_pending} pending, ${info.num_ack_pending} unacked`);
    const deadLetters = (await inspector.manager.streams.info(Streams.deadLetters)).state.messages;
    await inspector.drain();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const rows = (
      await client.query(
        `SELECT (SELECT count(*) FROM reporting.recommendation) AS recommendations,
                (SELECT count(*) FROM reporting.accounting_entry) AS entries,
                (SELECT count(*) FROM reporting.rollup_minute) AS minute_rows,
                (SELECT count(*) FROM reporting.rollup_hour) AS hour_rows,
                (SELECT count(*) FROM reporting.breakdown_pair) + (SELECT count(*) FROM reporting.breakdown_rollup) AS breakdown_rows,
                (SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0) FROM pg_inherits i
                  WHERE i.inhparent IN ('reporting.breakdown_pair'::regclass, 'reporting.breakdown_rollup'::regclass)) AS breakdown_bytes,
                (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
                  WHERE c.relnamespace = 'reporting'::regnamespace AND c.relkind IN ('r', 'm')) AS store_bytes`,
      )
    ).rows[0] as Record<string, string>;
    await client.end();
    console.log(`    store: ${fmt(Number(rows.store_bytes) / total)} bytes per event (every table and partition of the reporting schema, \`ops storage\`)`);
    console.log(
      `    breakdowns (by ad and product): ${fmt(Number(rows.breakdown_rows))} rollup rows (one per (ad, product) pair and hour), ${(Number(rows.breakdown_rows) / total).toFixed(3)} rows and ${fmt(Number(rows.breakdown_bytes) / total)} bytes per event (included above)`,
    );
    console.log(`    (start-up took ${((started - launched) / 1000).toFixed(1)} s more)`);
    return { rate: (total - before) / seconds, seconds, cpu, rows: { ...rows, deadLetters }, maxRssMb: memory.peak / 2 ** 20, timed: total - before };
  } finally {
    sampling = false;
    await sampler;
    await child.stop();
    if (PROFILE_DIR) console.log(`    CPU profile: ${join(PROFILE_DIR, `projection-${workload}.cpuprofile`)}`);
  }
}

async function benchmark(workload: Workload) {
  console.log(`\nworkload "${workload.name}": ${fmt(TOTAL)} events, ${workload.description}`);
  const nats = await startNats();
  const db = newTestDatabase();
  try {
    const total = await prepublish(nats.url, workload);
    const loadBefore = load();
    const projection = await runProjection(nats.url, db, total, workload.name);
    const bare = await runBare(nats.url, db, total, BATCH);
    const ratio = projection.rate / bare.rate;
    const r = projection.rows;
    console.log(`  read model: ${fmt(Number(r.recommendations))} recommendations, ${fmt(Number(r.entries))} accounting entries, ${fmt(Number(r.minute_rows))} minute and ${fmt(Number(r.hour_rows))} hour rollup rows; ${fmt(Number(r.deadLetters))} dead letters`);
    console.log(`  reporting-projection: ${fmt(projection.timed)} events (of ${fmt(total)}) in ${projection.seconds.toFixed(1)} s = ${fmt(projection.rate)} events/s (batch ${BATCH}, ${CONCURRENCY} concurrent partitions); CPU per event: Node ${perEvent(projection.cpu.node, projection.timed)}, PostgreSQL ${perEvent(projection.cpu.postgres, projection.timed)}`);
    console.log(`  bare consumer (fetch, one unnest upsert per batch, ack): ${fmt(bare.rate)} events/s; CPU per event: Node ${perEvent(bare.cpu.node, total)}, PostgreSQL ${perEvent(bare.cpu.postgres, total)}`);
    const target = TARGET_RATIO[workload.name];
    console.log(`  ratio ${ratio.toFixed(2)} (target ≥ ${target}: ${ratio >= target ? 'met' : 'NOT met'}); reporting-projection peak RSS ${projection.maxRssMb.toFixed(0)} MB (target ≤ ${TARGET_RSS_MB}: ${projection.maxRssMb <= TARGET_RSS_MB ? 'met' : 'NOT met'}); load average ${loadBefore} → ${load()}`);
    return { workload: workload.name, projection: projection.rate, bare: bare.rate, ratio, rss: projection.maxRssMb, node: perEvent(projection.cpu.node, projection.timed), postgres: perEvent(projection.cpu.postgres, projection.timed) };
  } finally {
    await nats.stop();
    await db.drop();
  }
}

async function main() {
  // The servers' child processes are unref'd: keep the process alive while they stop.
  const keepAlive = setInterval(() => undefined, 1000);
  console.log(`machine: ${machine()}`);
  console.log(`reporting-projection: node ${[...REPORTING_PROJECTION_NODE_FLAGS, ...NODE_ARGS].join(' ')}; environment ${process.env.INGEST_PROCESS_ENV === '0' ? 'without REPORTING_PROJECTION_PROCESS_ENV' : Object.entries(REPORTING_PROJECTION_PROCESS_ENV).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  console.log(`load average (1, 5, 15 min): ${load()}`);
  const results = [];
  for (const name of WORKLOADS) {
    if (name !== 'streaming' && name !== 'backfill') throw new Error(`INGEST_WORKLOAD: unknown workload ${name} (streaming, backfill or both)`);
    results.push(await benchmark(name === 'streaming' ? streamingWorkload(TOTAL) : backfillWorkload(TOTAL)));
  }
  console.log('\nworkload   projection ev/s  bare ev/s  ratio  target  Node/event  PostgreSQL/event  max RSS');
  for (const r of results) {
    console.log(
      `${r.workload.padEnd(10)} ${fmt(r.projection).padStart(15)} ${fmt(r.bare).padStart(10)}  ${r.ratio.toFixed(2).padStart(5)}  ≥ ${TARGET_RATIO[r.workload]}  ${r.node.padStart(10)}  ${r.postgres.padStart(16)}  ${r.rss.toFixed(0)} MB`,
    );
  }
  console.log(`load average (1, 5, 15 min): ${load()}`);
  clearInterval(keepAlive);
}

await main();
