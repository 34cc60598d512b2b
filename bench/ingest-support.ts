/**
 * What bench:ingest and bench:growth share: publishing a workload's backlog, the CPU of this
 * process and of one database's backends over a phase, the projection consumer's progress, and
 * the bare consumer that is the ceiling of the same run.
 */
import pg from 'pg';
import { AckPolicy } from '@nats-io/jetstream';
import { Durables, Streams } from '#libs/contracts';
import { NatsClient, ensureStreams } from '#libs/nats';
import { counter } from '#libs/observability';
import { POSTGRES_ADMIN_URL, connectProducer } from '../test/support/index.js';
import type { Workload } from './ingest-workloads.js';
import { fmt, processCpuSeconds } from './support.js';

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

/**
 * Measures the CPU spent by a Node process (this one, or the child `nodePid`) and by the
 * backends of one database over a phase.
 */
export class CpuMeter {
  private readonly admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  private readonly startBackends = new Map<number, number>();
  private startNode = 0;

  constructor(
    private readonly database: string,
    private readonly nodePid?: number,
  ) {}

  async start(): Promise<void> {
    await this.admin.connect();
    for (const [pid, s] of backendCpuSeconds(await this.pids())) this.startBackends.set(pid, s);
    this.startNode = this.nodeSeconds();
  }

  /** Node and PostgreSQL CPU seconds since start (call before the database's connections close). */
  async stop(): Promise<{ node: number; postgres: number }> {
    const node = this.nodeSeconds() - this.startNode;
    let postgres = 0;
    for (const [pid, s] of backendCpuSeconds(await this.pids())) postgres += s - (this.startBackends.get(pid) ?? 0);
    await this.admin.end();
    return { node, postgres };
  }

  private nodeSeconds(): number {
    if (this.nodePid !== undefined) return processCpuSeconds(this.nodePid);
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  }

  private async pids(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [this.database]);
    return rows.map((row) => row.pid);
  }
}

export async function prepublish(url: string, workload: Workload): Promise<number> {
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

export interface Run {
  rate: number;
  seconds: number;
  cpu: { node: number; postgres: number };
}

/** The ceiling: fetch the same messages, one unnest upsert per batch, ack; nothing else. */
export async function runBare(url: string, db: { url: string; name: string }, total: number, batchSize: number): Promise<Run> {
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
    for await (const m of await consumer.fetch({ max_messages: batchSize, expires: 1000 })) batch.push(m);
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
export async function settledMessages(): Promise<number> {
  const { values } = await settledTotal.get();
  return values
    .filter((v) => v.labels.durable === Durables.reportingProjection && v.labels.outcome !== 'retry')
    .reduce((sum, v) => sum + v.value, 0);
}

export const perEvent = (cpuSeconds: number, total: number) => `${((cpuSeconds * 1e6) / total).toFixed(1)} µs`;
