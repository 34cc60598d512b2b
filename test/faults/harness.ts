import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { firstValueFrom } from 'rxjs';
import {
  DeadLetterHeaders,
  Durables,
  EventSubjects,
  RpcSubjects,
  Streams,
  TIME_RANGES,
  type Report,
  type ReportReply,
  type TimeRange,
} from '#libs/contracts';
import { NatsClient, NatsRpcClient, ensureDurableConsumer, ensureStreams } from '#libs/nats';
import {
  freePort,
  startNats,
  startPrivatePostgres,
  startPrivateRedis,
  waitFor,
  type PrivatePostgres,
  type PrivateRedis,
  type TestNats,
} from '../support/index.js';
import { referenceReport, type ModelEvent } from '../support/reference-model.js';

/**
 * What the fault tests share: services run as child processes of the built code (so they can
 * be SIGKILLed), a generated workload with its reference-model events, a fast concurrent
 * producer that counts only PubAck'ed events, and the comparison of every published report
 * with the reference model.
 */

// ---------------------------------------------------------------------------------------------
// Services as child processes

export type ServiceName = 'gateway' | 'reporting-projection';

const PORT_VARIABLE: Record<ServiceName, string> = {
  gateway: 'PORT',
  'reporting-projection': 'REPORTING_HTTP_PORT',
};

export interface ServiceProcess {
  name: string;
  pid: number;
  port: number;
  url: string;
  /** Everything the process wrote to stdout and stderr so far (pino JSON lines). */
  output(): string;
  running(): boolean;
  /** Sends a signal and waits for the process to end. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not ended within 15 s. */
  stop(): Promise<void>;
  metrics(): Promise<string>;
}

const OUTPUT_LIMIT = 4 * 1024 * 1024;

/**
 * Starts `node dist/apps/<service>/src/main.js` as Kubernetes would, on a free port, and waits
 * until its HTTP listener answers (Nest listens only after every bootstrap hook has run: the
 * migrations, the streams and the consumers are in place by then).
 */
export async function startService(
  name: ServiceName,
  env: Record<string, string | number>,
  { label = name as string, ready = 'live' as 'live' | 'ready' } = {},
): Promise<ServiceProcess> {
  const main = resolve(`dist/apps/${name}/src/main.js`);
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      [PORT_VARIABLE[name]]: String(port),
      ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    if (output.length < OUTPUT_LIMIT) output += chunk.toString();
    if (process.env.FAULTS_VERBOSE) process.stderr.write(`[${label}] ${chunk.toString()}`);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (!running()) return;
    child.kill(signal);
    await exited;
  };
  try {
    await waitFor(
      async () => {
        if (!running()) throw new Error(`${label} exited (${child.exitCode ?? child.signalCode}): ${output.slice(-2000)}`);
        return (await fetch(`${url}/health/${ready}`)).status === 200;
      },
      { timeoutMs: 60000, intervalMs: 100, what: `${label} to answer /health/${ready}` },
    );
  } catch (error) {
    await kill();
    throw error;
  }
  return {
    name: label,
    pid: child.pid!,
    port,
    url,
    output: () => output,
    running,
    kill,
    stop: async () => {
      if (!running()) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
    metrics: async () => (await fetch(`${url}/metrics`)).text(),
  };
}

/** The value of one sample of a Prometheus text exposition (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Lines of a process's output that speak of a deadlock, a serialization failure or an unhandled rejection. */
export function concurrencyTrouble(output: string): string[] {
  return output.split('\n').filter((line) => /deadlock|could not serialize|unhandled|uncaught/i.test(line));
}

/** Runs the ops CLI (dist/apps/ops/src/main.js) and returns its one JSON object. */
export function ops(args: string[], env: { DATABASE_URL: string; NATS_URL: string }): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [resolve('dist/apps/ops/src/main.js'), ...args],
      { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, timeout: 30000 },
      (error, stdout, stderr) => (error ? fail(new Error(`ops ${args.join(' ')}: ${stderr || error.message}`)) : done(JSON.parse(stdout))),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Workload and reference model

export interface WireMessage {
  subject: string;
  msgId: string;
  data: string;
}

export interface Workload {
  agents: string[];
  /** What producers publish, in publication order (shuffled, with duplicates). */
  messages: WireMessage[];
  /** One model event per wire message (duplicates included; the model drops them). */
  modelOf: ModelEvent[];
}

/** A small deterministic PRNG (mulberry32), so a failing run can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LIFECYCLE = [
  { kind: 'generated', p: 0.6 },
  { kind: 'shown', p: 0.7 },
  { kind: 'mentioned', p: 0.15 },
  { kind: 'clicked', p: 0.4 },
  { kind: 'engaged', p: 0.2 },
  { kind: 'converted', p: 0.1 },
] as const;

/**
 * Many recommendations over a few platforms and both traffics, created over the last 100 days
 * (a third in the last 26 hours, so `today` and `1d` have data too), up to `newestAgeMs` before
 * now. Each recommendation gets a random subset of lifecycle events; accounting entries (USD,
 * foreign, unresolved currency, reversals, for unknown recommendations or another platform)
 * and reconciliation watermarks are mixed in. The whole stream is shuffled (levels and
 * accounting arrive out of order), then 3 % of events are published twice under another
 * Nats-Msg-Id (stored twice: the projection must absorb them) and 2 % twice under the same one
 * (JetStream drops the copy).
 */
export function buildWorkload(options: { seed: number; targetEvents: number; agents: string[]; newestAgeMs?: number; now?: number }): Workload {
  const random = prng(options.seed);
  const now = options.now ?? Date.now();
  const newestAgeMs = options.newestAgeMs ?? 3 * 60_000;
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const agents = options.agents;
  const items: { message: WireMessage; model: ModelEvent }[] = [];
  const push = (subject: string, msgId: string, payload: Record<string, unknown>, model: ModelEvent) =>
    items.push({ message: { subject, msgId, data: JSON.stringify(payload) }, model });
  const createdAt = () => {
    const span = random() < 0.35 ? 26 * 3_600_000 : 100 * 86_400_000;
    return new Date(now - newestAgeMs - Math.floor(random() * span));
  };

  let r = 0;
  let entries = 0;
  // Originals up to 95 % of the target; duplicates fill the rest.
  while (items.length < options.targetEvents * 0.95) {
    const id = `rec_${options.seed}_${r++}`;
    const agent = pick(agents);
    const traffic: 'live' | 'test' = random() < 0.25 ? 'test' : 'live';
    const created = createdAt();
    const kinds = LIFECYCLE.filter((l) => random() < l.p).map((l) => l.kind);
    if (kinds.length === 0) kinds.push('shown');
    for (const kind of kinds) {
      const billable = (kind === 'clicked' || kind === 'converted') && random() < 0.5 ? true : undefined;
      const eventId = `evt_${kind}_${id}`;
      const occurred = new Date(created.getTime() + Math.floor(random() * 60_000)).toISOString();
      const payload = {
        event_id: eventId,
        recommendation_id: id,
        agent_id: agent,
        traffic,
        recommendation_created_at: created.toISOString(),
        occurred_at: occurred,
        ...(billable ? { billable } : {}),
      };
      push(`events.recommendation.${kind}`, eventId, payload, {
        type: 'recommendation',
        kind,
        event_id: eventId,
        recommendation_id: id,
        agent_id: agent,
        traffic,
        recommendation_created_at: payload.recommendation_created_at,
        occurred_at: occurred,
        billable,
      });
    }
    if (random() < 0.2) {
      const count = random() < 0.25 ? 2 : 1;
      for (let i = 0; i < count; i++) {
        const entryId = `acc_${options.seed}_${entries++}`;
        const odd = random();
        const entry = {
          entry_id: entryId,
          // 3 %: recorded against another platform (never attributed: stays under review)
          agent_id: odd < 0.03 ? pick(agents.filter((a) => a !== agent).concat(`${agent}_other`)) : agent,
          traffic,
          // 4 %: no recommendation at all, 3 %: a recommendation nobody ever sends
          recommendation_id: odd >= 0.03 && odd < 0.07 ? null : odd >= 0.07 && odd < 0.1 ? `rec_unknown_${entryId}` : id,
          amount_micros: random() < 0.05 ? -Math.floor(random() * 500_000) : Math.floor(random() * 5_000_000),
          currency: random() < 0.04 ? 'EUR' : random() < 0.02 ? null : 'USD',
          recorded_at: new Date(created.getTime() + Math.floor(random() * 3_600_000)).toISOString(),
        };
        if (Date.parse(entry.recorded_at) > now - newestAgeMs) entry.recorded_at = created.toISOString();
        push('events.accounting.entry', entryId, entry, { type: 'accounting', ...entry });
      }
    }
  }
  for (let i = 0; i < 12; i++) {
    const eventId = `wm_${options.seed}_${i}`;
    const traffic = i % 2 === 0 ? 'live' : 'test';
    const agent = i % 3 === 0 ? pick(agents) : undefined;
    const through = new Date(now - newestAgeMs - Math.floor(random() * 3 * 86_400_000)).toISOString();
    const payload = { event_id: eventId, traffic, reconciled_through: through, ...(agent ? { agent_id: agent } : {}) };
    push('events.accounting.reconciled', eventId, payload, { type: 'reconciled', ...payload } as ModelEvent);
  }

  // Shuffle: levels, entries and watermarks arrive in any order.
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  // Duplicates up to the target, each inserted after its original (one pass, no splicing).
  const originals = items.length;
  const insertedAfter = new Map<number, typeof items>();
  for (let i = 0; originals + i < options.targetEvents; i++) {
    const k = Math.floor(random() * originals);
    const { message, model } = items[k];
    const sameId = random() < 0.4;
    const after = k + Math.floor(random() * (originals - k));
    const copies = insertedAfter.get(after) ?? [];
    copies.push({ message: { ...message, msgId: sameId ? message.msgId : `${message.msgId}#copy${i}` }, model });
    insertedAfter.set(after, copies);
  }
  const ordered: typeof items = [];
  items.forEach((item, index) => ordered.push(item, ...(insertedAfter.get(index) ?? [])));
  return { agents, messages: ordered.map((i) => i.message), modelOf: ordered.map((i) => i.model) };
}

/**
 * Events that make concurrent transactions meet: event j names recommendation j/10 + 0…39, so
 * every batch holds recommendations that already have rows and ones that do not, and the same
 * ones as the batches other replicas apply at that moment (about ten events each, any level, in
 * any order). Two replicas on this stream deadlocked before the projection created missing rows
 * before locking (test/faults/projection-replicas.spec.ts).
 */
export function contentionWorkload(options: { seed: number; events: number; agents: string[]; now?: number }): Workload {
  const random = prng(options.seed);
  const now = options.now ?? Date.now();
  const messages: WireMessage[] = [];
  const modelOf: ModelEvent[] = [];
  const kinds = LIFECYCLE.map((l) => l.kind);
  for (let j = 0; j < options.events; j++) {
    const r = Math.floor(j / 10) + Math.floor(random() * 40);
    const recommendationId = `hot_${options.seed}_${String(r).padStart(7, '0')}`;
    const agent = options.agents[r % options.agents.length];
    const traffic: 'live' | 'test' = r % 5 === 0 ? 'test' : 'live';
    // Fixed per recommendation, as producers send it: created between 5 min and ~2 days ago.
    const created = new Date(Math.floor((now - 5 * 60_000 - ((r * 7_919_000) % (2 * 86_400_000))) / 1000) * 1000).toISOString();
    const kind = kinds[Math.floor(random() * kinds.length)];
    const eventId = `hot_evt_${options.seed}_${j}`;
    const payload = { event_id: eventId, recommendation_id: recommendationId, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created };
    messages.push({ subject: `events.recommendation.${kind}`, msgId: eventId, data: JSON.stringify(payload) });
    modelOf.push({ type: 'recommendation', kind, ...payload });
  }
  return { agents: options.agents, messages, modelOf };
}

/** Workloads one after the other, as one stream. */
export function concatenate(...workloads: Workload[]): Workload {
  return {
    agents: [...new Set(workloads.flatMap((w) => w.agents))],
    messages: workloads.flatMap((w) => w.messages),
    modelOf: workloads.flatMap((w) => w.modelOf),
  };
}

// ---------------------------------------------------------------------------------------------
// A fast concurrent producer that keeps only what JetStream acknowledged

export interface PublishResult {
  /** Model events of the messages whose publish got a PubAck (all of them: failures are retried). */
  acked: ModelEvent[];
  /** PubAcks that were not duplicates (a retry of a publish stored before its PubAck was lost counts as a duplicate). */
  stored: number;
  duplicates: number;
  /** Publishes that failed (timeout, NATS down) and were sent again with the same Nats-Msg-Id. */
  retries: number;
}

export interface Producer {
  connection: NatsConnection;
  manager: JetStreamManager;
  /**
   * Publishes with `concurrency` publishes in flight. A failed publish is retried with the same
   * Nats-Msg-Id until JetStream acknowledges it (a retry of a message that was stored after all
   * comes back as a duplicate), so every message ends up acknowledged exactly once in the model.
   */
  publish(workload: Workload, options?: { concurrency?: number; from?: number; to?: number; onAck?: (count: number) => void }): Promise<PublishResult>;
  close(): Promise<void>;
}

export async function connectFaultProducer(url: string): Promise<Producer> {
  const connection = await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 250, name: 'fault-producer' });
  const js = jetstream(connection);
  const manager = await jetstreamManager(connection);
  const encoder = new TextEncoder();
  return {
    connection,
    manager,
    publish: async (workload, { concurrency = 256, from = 0, to = workload.messages.length, onAck } = {}) => {
      const result: PublishResult = { acked: [], stored: 0, duplicates: 0, retries: 0 };
      const ackedIndexes: number[] = [];
      let next = from;
      const worker = async () => {
        while (next < to) {
          const index = next++;
          const message = workload.messages[index];
          const data = encoder.encode(message.data);
          for (let attempt = 0; ; attempt++) {
            try {
              const ack = await js.publish(message.subject, data, { msgID: message.msgId, timeout: 5000 });
              if (ack.duplicate) result.duplicates++;
              else result.stored++;
              ackedIndexes.push(index);
              onAck?.(ackedIndexes.length);
              break;
            } catch {
              result.retries++;
              if (attempt > 600) throw new Error(`publish of ${message.msgId} kept failing`);
              await new Promise((r) => setTimeout(r, 100));
            }
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      result.acked = ackedIndexes.sort((a, b) => a - b).map((i) => workload.modelOf[i]);
      return result;
    },
    close: async () => {
      await connection.drain().catch(() => connection.close());
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Consumer state, reports and the comparison with the model

export async function consumerState(manager: JetStreamManager) {
  const info = await manager.consumers.info(Streams.events, Durables.reportingProjection);
  return { pending: info.num_pending, ackPending: info.num_ack_pending, ackFloor: info.ack_floor.stream_seq, delivered: info.delivered.stream_seq, redelivered: info.num_redelivered };
}

/**
 * Waits until the durable consumer has applied and acked everything stored (nothing pending,
 * nothing delivered and unacked) and returns when that was first seen. After a crash, the
 * batches the dead process held come back after the consumer's ack_wait (60 s).
 */
export async function waitCaughtUp(manager: JetStreamManager, { timeoutMs = 180000, expectStored }: { timeoutMs?: number; expectStored?: number } = {}): Promise<Date> {
  await waitFor(
    async () => {
      const state = await consumerState(manager);
      if (expectStored !== undefined) {
        const stream = await manager.streams.info(Streams.events);
        if (stream.state.messages < expectStored) return false;
      }
      return state.pending === 0 && state.ackPending === 0;
    },
    { timeoutMs, intervalMs: 250, what: 'the projection to catch up (nothing pending or unacked)' },
  );
  return new Date();
}

export interface Scope {
  agent_id: string;
  traffic: 'live' | 'test';
  time_range: TimeRange;
}

export function allScopes(agents: string[]): Scope[] {
  return agents.flatMap((agent_id) => (['live', 'test'] as const).flatMap((traffic) => TIME_RANGES.map((time_range) => ({ agent_id, traffic, time_range }))));
}

/** A report request through the Nest client; a failure (an error reply, no answer in time) rejects. */
export function requestReport(connection: NatsConnection, scope: Scope, timeoutMs = 5000): Promise<ReportReply> {
  return firstValueFrom(new NatsRpcClient({ connection, timeoutMs }).send<ReportReply>(RpcSubjects.reportGet, scope));
}

/** Asks for every scope once, so they are prepared and published by every cycle from now on. */
export async function registerScopes(connection: NatsConnection, scopes: Scope[]): Promise<void> {
  for (const scope of scopes) {
    await waitFor(() => requestReport(connection, scope), { timeoutMs: 30000, what: `reporting to answer for ${scope.agent_id}` });
  }
}

/** The reports of every scope, all from publications that started at or after `since`. */
export async function reportsPublishedAfter(connection: NatsConnection, scopes: Scope[], since: Date, timeoutMs = 60000): Promise<Report[]> {
  const reports: Report[] = [];
  for (const scope of scopes) {
    reports.push(
      await waitFor(
        async () => {
          const report = await requestReport(connection, scope);
          if (report.status === 'preparing') return undefined;
          return Date.parse(report.updated_at) >= since.getTime() ? report : undefined;
        },
        { timeoutMs, intervalMs: 200, what: `a report of ${scope.agent_id}/${scope.traffic}/${scope.time_range} published after ${since.toISOString()}` },
      ),
    );
  }
  return reports;
}

export interface Comparison {
  scopes: number;
  mismatches: string[];
  /** Sum of the counters over the `all` reports, to show the test compared real numbers. */
  totals: { exposures: number; clicks: number; conversions: number; earnings_micros: number; accounting_review_required: number };
}

const COUNTERS = [
  'exposures',
  'clicks',
  'engagements',
  'conversions',
  'earnings_micros',
  'earnings_excluded_recommendations',
  'pending_earnings_recommendations',
  'accounting_review_required',
] as const;

/**
 * Every report against the reference model of the acknowledged events over the report's own
 * period (start_at, end_at): each counter, the watermark and the coverage must be equal.
 */
export function compareWithModel(reports: Report[], acked: ModelEvent[]): Comparison {
  const mismatches: string[] = [];
  const totals = { exposures: 0, clicks: 0, conversions: 0, earnings_micros: 0, accounting_review_required: 0 };
  const eventsOf = scopedEvents(acked);
  for (const report of reports) {
    const traffic = report.is_test ? 'test' : 'live';
    const scope = `${report.agent_id}/${traffic}/${report.time_range}`;
    const end = new Date(report.end_at);
    if (report.end_at !== report.processed_through) mismatches.push(`${scope}: end_at ${report.end_at} is not processed_through ${report.processed_through}`);
    const expected = referenceReport(eventsOf(report.agent_id, traffic), { agent_id: report.agent_id, traffic, start: report.start_at ? new Date(report.start_at) : null, end });
    for (const counter of COUNTERS) {
      if (report[counter] !== expected[counter]) mismatches.push(`${scope}: ${counter} ${report[counter]} ≠ model ${expected[counter]}`);
    }
    const watermark = expected.reconciled_through?.toISOString() ?? null;
    if (report.accounting_reconciled_through !== watermark) mismatches.push(`${scope}: accounting_reconciled_through ${report.accounting_reconciled_through} ≠ model ${watermark}`);
    const coverage =
      expected.reconciled_through === null
        ? 'unavailable'
        : expected.reconciled_through >= end && expected.pending_earnings_recommendations === 0 && expected.accounting_review_required === 0
          ? 'complete'
          : 'partial';
    if (report.earnings_coverage !== coverage) mismatches.push(`${scope}: earnings_coverage ${report.earnings_coverage} ≠ model ${coverage}`);
    if (report.time_range === 'all') for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += report[key];
  }
  return { scopes: reports.length, mismatches, totals };
}

/**
 * The events the reference model needs for one platform and traffic. The model replays every
 * event for every scope (about a second per call for 200,000 events); when no recommendation
 * is named under two platforms or traffics (true of buildWorkload), the events of other scopes
 * cannot change this one's report: an entry is attributed only to a recommendation of its own
 * platform and traffic, and watermarks apply by traffic (and platform, when they name one).
 * Otherwise every event is kept.
 */
function scopedEvents(events: ModelEvent[]): (agentId: string, traffic: 'live' | 'test') => ModelEvent[] {
  const owner = new Map<string, string>();
  let separable = true;
  for (const event of events) {
    if (event.type !== 'recommendation') continue;
    const scope = `${event.agent_id}\u0000${event.traffic}`;
    const known = owner.get(event.recommendation_id);
    if (known === undefined) owner.set(event.recommendation_id, scope);
    else if (known !== scope) separable = false;
  }
  const cache = new Map<string, ModelEvent[]>();
  return (agentId, traffic) => {
    if (!separable) return events;
    const key = `${agentId}\u0000${traffic}`;
    let list = cache.get(key);
    if (!list) {
      list = events.filter((event) =>
        event.type === 'reconciled'
          ? event.traffic === traffic && ((event.agent_id ?? null) === null || event.agent_id === agentId)
          : event.agent_id === agentId && event.traffic === traffic,
      );
      cache.set(key, list);
    }
    return list;
  };
}

/** Rows of the read model against the model: one per known recommendation, one per entry. */
export async function readModelRows(databaseUrl: string): Promise<{ recommendations: number; entries: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const [{ recommendations }] = (await client.query(`SELECT count(*)::int AS recommendations FROM reporting.recommendation WHERE agent_id IS NOT NULL`)).rows;
    const [{ entries }] = (await client.query(`SELECT count(*)::int AS entries FROM reporting.accounting_entry`)).rows;
    return { recommendations, entries };
  } finally {
    await client.end();
  }
}

export function modelRows(acked: ModelEvent[]): { recommendations: number; entries: number } {
  const recommendations = new Set<string>();
  const entries = new Set<string>();
  for (const event of acked) {
    if (event.type === 'recommendation') recommendations.add(event.recommendation_id);
    else if (event.type === 'accounting') entries.add(event.entry_id);
  }
  return { recommendations: recommendations.size, entries: entries.size };
}

export interface DeadLetterSeen {
  subject: string;
  reason: string;
  deliveries: number;
  originalSequence: number;
  data: string;
}

/** Everything in DEAD_LETTERS, read with an ordered consumer (nothing is acked or removed). */
export async function deadLetters(connection: NatsConnection, manager: JetStreamManager): Promise<DeadLetterSeen[]> {
  const info = await manager.streams.info(Streams.deadLetters);
  if (info.state.messages === 0) return [];
  const consumer = await jetstream(connection).consumers.get(Streams.deadLetters);
  const letters: DeadLetterSeen[] = [];
  const messages = await consumer.fetch({ max_messages: info.state.messages, expires: 5000 });
  for await (const m of messages) {
    letters.push({
      subject: m.subject,
      reason: m.headers?.get(DeadLetterHeaders.reason) ?? '',
      deliveries: Number(m.headers?.get(DeadLetterHeaders.deliveries)),
      originalSequence: Number(m.headers?.get(DeadLetterHeaders.originalSequence)),
      data: m.string(),
    });
    if (letters.length >= info.state.messages) break;
  }
  return letters;
}

/**
 * Creates the streams and the projection's durable consumer as the service would, but with a
 * shorter ack_wait (the service keeps an existing consumer as it is). Messages a killed process
 * held come back after ack_wait: 15 s instead of 60 s keeps the run short; the path is the same.
 */
export async function prepareProjectionConsumer(url: string, ackWaitMs = 15_000): Promise<void> {
  const client = await NatsClient.connect({ servers: [url], name: 'fault-setup' });
  try {
    await ensureStreams(client.manager);
    await ensureDurableConsumer(client.manager, {
      stream: Streams.events,
      durable: Durables.reportingProjection,
      filterSubject: EventSubjects.all,
      ackWaitMs,
      maxAckPending: 20_000,
    });
  } finally {
    await client.drain();
  }
}

/** Milliseconds since the previous lap, by name: where a fault test spent its time. */
export function stopwatch(): { lap(name: string): void; laps: Record<string, number> } {
  let last = Date.now();
  const laps: Record<string, number> = {};
  return {
    laps,
    lap: (name) => {
      const now = Date.now();
      laps[name] = now - last;
      last = now;
    },
  };
}

/** A line for the test output: what a fault did to the numbers. */
export function report(scenario: string, figures: Record<string, unknown>): void {
  process.stdout.write(`\n[faults] ${scenario}: ${JSON.stringify(figures)}\n`);
}

/** The private servers of one fault test file, and the producer connected to its NATS. */
export interface FaultServers {
  postgres: PrivatePostgres;
  nats: TestNats;
  redis: PrivateRedis;
  producer: Producer;
}

/** Starts a file's own PostgreSQL, NATS (JetStream, file storage) and Redis, never the machine's. */
export async function startFaultServers(): Promise<FaultServers> {
  const [postgres, nats, redis] = await Promise.all([startPrivatePostgres(), startNats(), startPrivateRedis()]);
  return { postgres, nats, redis, producer: await connectFaultProducer(nats.url) };
}

/** Kills the services a file started, then stops its servers (each part may be missing after a failed start). */
export async function stopFaultServers(servers: Partial<FaultServers>, services: (ServiceProcess | undefined)[] = []): Promise<void> {
  servers.nats?.signal('SIGCONT');
  for (const service of services) await service?.kill();
  await servers.producer?.close();
  await Promise.all([servers.nats?.stop(), servers.redis?.destroy(), servers.postgres?.destroy()]);
}
