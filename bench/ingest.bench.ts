/**
 * Ingest benchmark (issues 2 and 15): pre-publish a backlog of events to JetStream, then measure
 * the events/s reporting-projection applies until its consumer is caught up; beside it, in the
 * same run and on the same backlog, the ceiling: a bare consumer that fetches, acks and does one
 * unnest upsert per batch. Two workloads (bench/ingest-workloads.ts), each on its own NATS
 * server and database: `day` (today's, mostly in order) and `month` (30 days, 12 kinds of
 * history, fully shuffled).
 *
 *   npm run bench:ingest                      both workloads, 1,000,000 events each
 *   EVENTS=200000 INGEST_WORKLOAD=month npm run bench:ingest
 *   INGEST_CPU_PROFILE=/tmp/prof npm run bench:ingest   (a .cpuprofile of each projection run)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AckPolicy } from '@nats-io/jetstream';
import { Durables, Streams } from '#libs/contracts';
import { NatsClient, ensureStreams } from '#libs/nats';
import { counter } from '#libs/observability';
import { ReportingProjectionEnv } from '../apps/reporting-projection/src/config/reporting-projection.env.js';
import { POSTGRES_ADMIN_URL, connectProducer, newTestDatabase, startNats, startReportingProjection, waitFor } from '../test/support/index.js';
import { dayWorkload, monthWorkload, type Workload } from './ingest-workloads.js';
import { fmt, machine, processCpuSeconds } from './support.js';

const TOTAL = Number(process.env.EVENTS ?? 1_000_000);
const WORKLOADS = (process.env.INGEST_WORKLOAD ?? 'day,month').split(',').flatMap((w) => (w === 'both' ? ['day', 'month'] : [w]));
const defaults = new ReportingProjectionEnv();
const BATCH = Number(process.env.INGEST_BATCH_SIZE ?? defaults.INGEST_BATCH_SIZE);
const CONCURRENCY = Number(process.env.INGEST_CONCURRENCY ?? defaults.INGEST_CONCURRENCY);
const PROFILE_DIR = process.env.INGEST_CPU_PROFILE;
const TARGET_RATIO = 0.6;
const TARGET_RATE = 35_000;

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');

/** CPU seconds (user + system) of PostgreSQL backends, from /proc (this machine's server). */
function backendCpuSeconds(pids: readonly number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    try {
      seconds.set(pid, processCpuSeconds(pid));
    } catch {
      // not on this machine, or gone
    }
  }
  return seconds;
}

/** Measures the CPU spent by this process and by the backends of one database over a phase. */
class CpuMeter {
  private readonly admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  private readonly startBackends = new Map<number, number>();
  private startProcess = process.cpuUsage();

  constructor(private readonly database: string) {}

  async start(): Promise<void> {
    await this.admin.connect();
    for (const [pid, s] of backendCpuSeconds(await this.pids())) this.startBackends.set(pid, s);
    this.startProcess = process.cpuUsage();
  }

  /** Node and PostgreSQL CPU seconds since start (call before the database's connections close). */
  async stop(): Promise<{ node: number; postgres: number }> {
    const usage = process.cpuUsage(this.startProcess);
    let postgres = 0;
    for (const [pid, s] of backendCpuSeconds(await this.pids())) postgres += s - (this.startBackends.get(pid) ?? 0);
    await this.admin.end();
    return { node: (usage.user + usage.system) / 1e6, postgres };
  }

  private async pids(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [this.database]);
    return rows.map((row) => row.pid);
  }
}

async function prepublish(url: string, workload: Workload): Promise<number> {
  const producer = await connectProducer(url);
  const nats = await NatsClient.connect({ servers: [url], name: 'bench-setup' });
  await ensureStreams(nats.manager);
  await nats.drain();
  const encoder = new TextEncoder();
  const started = Date.now();
  let inFlight: Promise<unknown>[] = [];
  let count = 0;
  for (const event of workload.events()) {
    inFlight.push(producer.js.publish(event.subject, encoder.encode(JSON.stringify(event.payload)), { msgID: event.msgId }));
    count++;
    if (inFlight.length >= 2000) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  await producer.close();
  const seconds = (Date.now() - started) / 1000;
  console.log(`  published ${fmt(count)} events in ${seconds.toFixed(1)} s (${fmt(count / seconds)} events/s)`);
  return count;
}

interface Run {
  rate: number;
  seconds: number;
  cpu: { node: number; postgres: number };
}

async function runProjection(natsUrl: string, db: { url: string; name: string }, total: number, workload: string): Promise<Run & { rows: Record<string, string | number> }> {
  const launched = Date.now();
  const service = await startReportingProjection({
    natsUrl,
    databaseUrl: db.url,
    REPORTING_PUBLISH_INTERVAL_MS: 3_600_000,
    INGEST_BATCH_SIZE: BATCH,
    INGEST_CONCURRENCY: CONCURRENCY,
  });
  const meter = new CpuMeter(db.name);
  await meter.start();
  const profiler = PROFILE_DIR ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const started = Date.now();
  // Progress from the consumer's own counter, in this process: on nats-server 2.9.10 every
  // consumer info call recalculates num_pending, which on a shuffled backlog stalls the
  // pending pull for seconds (fixed upstream in 2.9.15), so the bench asks only at the end.
  const before = await settledMessages();
  let last = 0;
  await waitFor(
    async () => {
      const settled = (await settledMessages()) - before;
      if (settled - last >= 200_000) {
        last = settled;
        console.log(`    applied ${fmt(settled)} / ${fmt(total)} (${fmt(settled / ((Date.now() - started) / 1000))} events/s)`);
      }
      return settled >= total;
    },
    { timeoutMs: 30 * 60_000, intervalMs: 20, what: 'projection caught up' },
  );
  const seconds = (Date.now() - started) / 1000;
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    await mkdir(PROFILE_DIR!, { recursive: true });
    const file = join(PROFILE_DIR!, `projection-${workload}.cpuprofile`);
    await writeFile(file, JSON.stringify(profile));
    profiler.disconnect();
    console.log(`    CPU profile: ${file}`);
  }
  const cpu = await meter.stop();
  const inspector = await NatsClient.connect({ servers: [natsUrl], name: 'bench-inspector' });
  const info = await inspector.manager.consumers.info(Streams.events, Durables.reportingProjection);
  if (info.num_pending !== 0 || info.num_ack_pending !== 0) throw new Error(`not caught up: ${info.num_pending} pending, ${info.num_ack_pending} unacked`);
  const deadLetters = (await inspector.manager.streams.info(Streams.deadLetters)).state.messages;
  await inspector.drain();
  const rows = (
    await service.app.get((await import('typeorm')).DataSource).query(
      `SELECT (SELECT count(*) FROM reporting.recommendation) AS recommendations,
              (SELECT count(*) FROM reporting.accounting_entry) AS entries,
              (SELECT count(*) FROM reporting.rollup_minute) AS minute_rows,
              (SELECT count(*) FROM reporting.rollup_hour) AS hour_rows,
              (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
                WHERE c.relnamespace = 'reporting'::regnamespace AND c.relkind IN ('r', 'm')) AS store_bytes`,
    )
  )[0];
  console.log(`    store: ${fmt(Number(rows.store_bytes) / total)} bytes per event (every table and partition of the reporting schema, \`ops storage\`)`);
  await service.close();
  console.log(`    (start-up took ${((started - launched) / 1000).toFixed(1)} s more)`);
  return { rate: total / seconds, seconds, cpu, rows: { ...rows, deadLetters } };
}

/** The ceiling: fetch the same messages, one unnest upsert per batch, ack; nothing else. */
async function runBare(url: string, db: { url: string; name: string }, total: number): Promise<Run> {
  const nats = await NatsClient.connect({ servers: [url], name: 'bench-bare' });
  await nats.manager.consumers.add(Streams.events, { durable_name: 'bench-bare', ack_policy: AckPolicy.Explicit, max_ack_pending: 20000 });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('CREATE TABLE IF NOT EXISTS bench_bare (id text PRIMARY KEY, n bigint NOT NULL)');
  const consumer = await nats.jetstream.consumers.get(Streams.events, 'bench-bare');
  const meter = new CpuMeter(db.name);
  await meter.start();
  const started = Date.now();
  let seen = 0;
  while (seen < total) {
    const batch = [];
    for await (const m of await consumer.fetch({ max_messages: BATCH, expires: 1000 })) batch.push(m);
    if (batch.length === 0) continue;
    const ids = batch.map((m) => m.json<{ recommendation_id?: string }>().recommendation_id ?? 'x');
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO bench_bare (id, n) SELECT id, count(*) FROM unnest($1::text[]) id GROUP BY id
       ON CONFLICT (id) DO UPDATE SET n = bench_bare.n + excluded.n`,
      [ids],
    );
    await client.query('COMMIT');
    for (const m of batch) m.ack();
    seen += batch.length;
  }
  const seconds = (Date.now() - started) / 1000;
  const cpu = await meter.stop();
  await client.end();
  await nats.drain();
  return { rate: seen / seconds, seconds, cpu };
}

const settledTotal = counter('weave_consumer_messages_total', 'Messages settled by outcome', ['durable', 'outcome']);

/** Messages the projection's consumer settled (applied or dead-lettered) so far. */
async function settledMessages(): Promise<number> {
  const { values } = await settledTotal.get();
  return values
    .filter((v) => v.labels.durable === Durables.reportingProjection && v.labels.outcome !== 'retry')
    .reduce((sum, v) => sum + v.value, 0);
}

const perEvent = (cpuSeconds: number, total: number) => `${((cpuSeconds * 1e6) / total).toFixed(1)} µs`;

async function benchmark(workload: Workload) {
  console.log(`\nworkload "${workload.name}": ${fmt(TOTAL)} events, ${workload.description}`);
  const nats = await startNats();
  const db = newTestDatabase();
  try {
    const total = await prepublish(nats.url, workload);
    const loadBefore = load();
    const projection = await runProjection(nats.url, db, total, workload.name);
    const bare = await runBare(nats.url, db, total);
    const ratio = projection.rate / bare.rate;
    const r = projection.rows;
    console.log(`  read model: ${fmt(Number(r.recommendations))} recommendations, ${fmt(Number(r.entries))} accounting entries, ${fmt(Number(r.minute_rows))} minute and ${fmt(Number(r.hour_rows))} hour rollup rows; ${fmt(Number(r.deadLetters))} dead letters`);
    console.log(`  reporting-projection: ${fmt(total)} events in ${projection.seconds.toFixed(1)} s = ${fmt(projection.rate)} events/s (batch ${BATCH}, ${CONCURRENCY} concurrent partitions); CPU per event: Node ${perEvent(projection.cpu.node, total)}, PostgreSQL ${perEvent(projection.cpu.postgres, total)}`);
    console.log(`  bare consumer (fetch, one unnest upsert per batch, ack): ${fmt(bare.rate)} events/s; CPU per event: Node ${perEvent(bare.cpu.node, total)}, PostgreSQL ${perEvent(bare.cpu.postgres, total)}`);
    console.log(`  ratio ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}); ≥ ${fmt(TARGET_RATE)} events/s: ${projection.rate >= TARGET_RATE ? 'met' : 'NOT met'}; load average ${loadBefore} → ${load()}`);
    return { workload: workload.name, projection: projection.rate, bare: bare.rate, ratio };
  } finally {
    await nats.stop();
    await db.drop();
  }
}

async function main() {
  // The servers' child processes are unref'd: keep the process alive while they stop.
  const keepAlive = setInterval(() => undefined, 1000);
  console.log(`machine: ${machine()}`);
  console.log(`load average (1, 5, 15 min): ${load()}`);
  const results = [];
  for (const name of WORKLOADS) {
    if (name !== 'day' && name !== 'month') throw new Error(`INGEST_WORKLOAD: unknown workload ${name} (day, month or both)`);
    results.push(await benchmark(name === 'day' ? dayWorkload(TOTAL) : monthWorkload(TOTAL)));
  }
  console.log('\nworkload  projection ev/s  bare ev/s  ratio');
  for (const r of results) console.log(`${r.workload.padEnd(9)} ${fmt(r.projection).padStart(15)} ${fmt(r.bare).padStart(10)}  ${r.ratio.toFixed(2)}`);
  clearInterval(keepAlive);
}

await main();
