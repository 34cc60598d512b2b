/**
 * Soak benchmark (issue 7, "Load"): events ingested and reports read at the same time, for
 * minutes, through the deployment shape — gateway, reporting-projection, payouts-read and
 * timezone-settings as child processes from dist/, a private nats-server (JetStream, file
 * storage), a fresh PostgreSQL database, Redis.
 *
 * - A publisher (a worker thread of this process) publishes recommendation lifecycle events and
 *   accounting entries for SOAK_PLATFORMS platforms at a steady SOAK_EVENTS_PER_SECOND to
 *   JetStream, each acknowledged (PubAck), as internal producers do.
 * - autocannon reads GET /agent/reporting at a steady SOAK_READS_PER_SECOND over
 *   SOAK_CONNECTIONS connections, rotating over the platforms' live keys and four time ranges.
 * - Every SOAK_SAMPLE_MS: events/s published and ingested, the consumer lag of
 *   reporting-projection (EVENTS consumer info: not yet delivered + delivered but not acked),
 *   req/s and p50/p99 of the reads in that interval, and each service's memory (resident set
 *   and V8 heap used, from its /metrics).
 * At the end: tables of the samples and of each service's memory at start, at the end and its
 * growth; then the time the projection took to catch up once publishing stopped.
 *
 *   npm run bench:soak                      (10 minutes)
 *   SOAK_DURATION_MS=60000 npm run bench:soak
 *   Defaults: SOAK_DURATION_MS=600000 SOAK_EVENTS_PER_SECOND=2000 SOAK_READS_PER_SECOND=500
 *   SOAK_CONNECTIONS=20 SOAK_PLATFORMS=20 SOAK_SAMPLE_MS=30000 SOAK_PUBLISH_INTERVAL_MS=15000
 */
import { createRequire } from 'node:module';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Durables, Streams } from '#libs/contracts';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { NatsClient, ensureStreams } from '#libs/nats';
import { REDIS_URL, connectProducer, freePort, newTestDatabase, startNats, waitFor } from '../test/support/index.js';
import { metricSum, scrapeMetrics, startChild, waitForHttp, type Child } from './harness.js';
import { fmt, machine, percentile } from './support.js';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DURATION_MS = setting('SOAK_DURATION_MS', 600_000);
const EVENTS_PER_SECOND = setting('SOAK_EVENTS_PER_SECOND', 2000);
const READS_PER_SECOND = setting('SOAK_READS_PER_SECOND', 500);
const CONNECTIONS = setting('SOAK_CONNECTIONS', 20);
const PLATFORMS = setting('SOAK_PLATFORMS', 20);
const SAMPLE_MS = setting('SOAK_SAMPLE_MS', 30_000);
const PUBLISH_INTERVAL_MS = setting('SOAK_PUBLISH_INTERVAL_MS', 15_000);
const RANGES = ['today', '1d', '7d', '30d'];
const agentOf = (p: number) => `agent_soak_${String(p).padStart(3, '0')}`;

// ---------------------------------------------------------------------------------------------
// The publisher (worker thread): a steady rate of valid events, each awaited for its PubAck.

interface PublisherSettings {
  natsUrl: string;
  eventsPerSecond: number;
  platforms: number;
}
/** `elapsedMs`: since the publisher began publishing (its own clock, without connecting and draining). */
type PublisherReport = { type: 'progress' | 'done'; published: number; acked: number; failed: number; behind: number; elapsedMs: number };

/** Events of recommendations created "now": generated, shown, some clicked/engaged/converted; accounting for a third. */
function* soakEvents(platforms: number): Generator<{ subject: string; id: string; payload: object }> {
  for (let r = 0; ; r++) {
    const agent = agentOf(r % platforms);
    const traffic = r % 10 === 0 ? 'test' : 'live';
    const created = Date.now() - 1000;
    const base = { recommendation_id: `rec_soak_${r}`, agent_id: agent, traffic, recommendation_created_at: new Date(created).toISOString() };
    const billable = r % 3 === 0;
    const kinds = ['generated', 'shown'];
    if (r % 4 === 0) kinds.push('clicked');
    if (r % 8 === 0) kinds.push(r % 16 === 0 ? 'converted' : 'engaged');
    for (const [i, kind] of kinds.entries()) {
      const id = `evt_soak_${r}_${kind}`;
      yield { subject: `events.recommendation.${kind}`, id, payload: { event_id: id, ...base, occurred_at: new Date(created + i).toISOString(), billable: billable && kind === 'clicked' } };
    }
    if (billable) {
      const id = `acc_soak_${r}`;
      yield {
        subject: 'events.accounting.entry',
        id,
        payload: { entry_id: id, agent_id: agent, traffic, recommendation_id: base.recommendation_id, amount_micros: 100_000 + (r % 1000), currency: r % 29 === 0 ? 'EUR' : 'USD', recorded_at: new Date(created + 10).toISOString() },
      };
    }
  }
}

async function publisher(settings: PublisherSettings): Promise<void> {
  const producer = await connectProducer(settings.natsUrl);
  const encoder = new TextEncoder();
  const events = soakEvents(settings.platforms);
  const counts = { published: 0, acked: 0, failed: 0, behind: 0, elapsedMs: 0 };
  const MAX_IN_FLIGHT = Math.max(1000, settings.eventsPerSecond);
  let inFlight = 0;
  let stopping = false;
  parentPort!.on('message', (message) => {
    if (message === 'stop') stopping = true;
  });
  const started = Date.now();
  const report = setInterval(() => parentPort!.postMessage({ type: 'progress', ...counts, elapsedMs: Date.now() - started } satisfies PublisherReport), 1000);
  while (!stopping) {
    // Publish what the steady rate says is due by now; never more than MAX_IN_FLIGHT unacknowledged.
    const due = Math.floor(((Date.now() - started) * settings.eventsPerSecond) / 1000) - counts.published;
    const room = MAX_IN_FLIGHT - inFlight;
    if (due > room) counts.behind = due - room;
    for (let i = 0; i < Math.min(due, room); i++) {
      const event = events.next().value!;
      counts.published++;
      inFlight++;
      producer.js.publish(event.subject, encoder.encode(JSON.stringify(event.payload)), { msgID: event.id }).then(
        () => {
          counts.acked++;
          inFlight--;
        },
        () => {
          counts.failed++;
          inFlight--;
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  counts.elapsedMs = Date.now() - started;
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(report);
  await producer.close();
  parentPort!.postMessage({ type: 'done', ...counts } satisfies PublisherReport);
}

// ---------------------------------------------------------------------------------------------
// The soak (main thread).

// autocannon ships no types; the part of its API used here.
interface AutocannonInstance extends PromiseLike<{ requests: { average: number; total: number }; latency: { p50: number; p99: number; max: number }; non2xx: number; errors: number; timeouts: number }> {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  overallRate: number;
  duration: number;
  timeout: number;
  requests: { method: string; setupRequest: (request: { path?: string; headers?: Record<string, string> }) => object }[];
}) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface Service {
  name: string;
  child: Child;
  metrics: string;
}

interface Memory {
  rss: number;
  heap: number;
}

interface Sample {
  atMs: number;
  published: number;
  ingested: number;
  lag: number;
  reads: number;
  readsFailed: number;
  p50: number;
  p99: number;
  memory: Record<string, Memory>;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)}`;
const pad = (text: string | number, width: number) => String(text).padStart(width);

async function memoryOf(services: Service[]): Promise<Record<string, Memory>> {
  const memory: Record<string, Memory> = {};
  for (const service of services) {
    const samples = await scrapeMetrics(service.metrics);
    memory[service.name] = { rss: metricSum(samples, 'process_resident_memory_bytes'), heap: metricSum(samples, 'nodejs_heap_size_used_bytes') };
  }
  return memory;
}

async function main() {
  console.log(`machine: ${machine()}`);
  console.log(
    `soak: ${fmt(DURATION_MS / 1000)} s; ${fmt(EVENTS_PER_SECOND)} events/s published; ${fmt(READS_PER_SECOND)} report reads/s over ${CONNECTIONS} connections; ` +
      `${PLATFORMS} platforms × ${RANGES.length} time ranges; samples every ${fmt(SAMPLE_MS / 1000)} s; REPORTING_PUBLISH_INTERVAL_MS=${PUBLISH_INTERVAL_MS}`,
  );
  const nats = await startNats();
  const db = newTestDatabase();
  const children: Child[] = [];
  let worker: Worker | undefined;
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
    const setup = await NatsClient.connect({ servers: [nats.url], name: 'soak-setup' });
    await ensureStreams(setup.manager);
    const ports = { reporting: await freePort(), payouts: await freePort(), timezone: await freePort(), gateway: await freePort() };
    const services: Service[] = [];
    const start = async (name: string, script: string, env: Record<string, string | number>, port: number) => {
      const child = startChild(name, script, { ...common, ...env });
      children.push(child);
      await waitForHttp(`http://127.0.0.1:${port}/health/ready`, { child });
      services.push({ name, child, metrics: `http://127.0.0.1:${port}/metrics` });
    };
    await start('reporting-projection', 'dist/apps/reporting-projection/src/main.js', { REPORTING_HTTP_PORT: ports.reporting, REPORTING_PUBLISH_INTERVAL_MS: PUBLISH_INTERVAL_MS }, ports.reporting);
    await start('payouts-read', 'dist/apps/payouts-read/src/main.js', { PAYOUTS_HTTP_PORT: ports.payouts }, ports.payouts);
    await start('timezone-settings', 'dist/apps/timezone-settings/src/main.js', { TIMEZONE_HTTP_PORT: ports.timezone }, ports.timezone);
    await start('gateway', 'dist/apps/gateway/src/main.js', { PORT: ports.gateway, TRACKING_SIGNING_SECRET: 'bench-soak-tracking-signing-secret' }, ports.gateway);
    const base = `http://127.0.0.1:${ports.gateway}`;

    // Platforms and live keys (the gateway has migrated the identity schema by now).
    const identityDb = createIdentityDataSource(db.url, 2, 'bench-soak');
    await identityDb.initialize();
    const identity = new IdentityRepository(identityDb);
    const keys: string[] = [];
    for (let p = 0; p < PLATFORMS; p++) {
      await identity.createPlatform(agentOf(p));
      keys.push((await identity.createKey(agentOf(p), 'live')).api_key);
    }
    await identityDb.destroy();

    // Prepare every scope read during the soak: the first request answers 202, then 200.
    const scopesStarted = Date.now();
    for (const key of keys) {
      for (const range of RANGES) {
        await waitFor(
          async () => {
            const response = await fetch(`${base}/agent/reporting?time_range=${range}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5000) });
            await response.arrayBuffer();
            return response.status === 200;
          },
          { timeoutMs: 120_000, intervalMs: 250, what: `a ${range} report` },
        );
      }
    }
    console.log(`${fmt(PLATFORMS * RANGES.length)} report scopes prepared in ${((Date.now() - scopesStarted) / 1000).toFixed(1)} s`);

    // The consumer lag and how far the projection got: stream messages − not yet acked.
    const progress = async () => {
      const [stream, consumer] = await Promise.all([setup.manager.streams.info(Streams.events), setup.manager.consumers.info(Streams.events, Durables.reportingProjection)]);
      const lag = consumer.num_pending + consumer.num_ack_pending;
      return { lag, ingested: stream.state.last_seq - lag };
    };

    // --- the soak ---
    const publisherState: PublisherReport = { type: 'progress', published: 0, acked: 0, failed: 0, behind: 0, elapsedMs: 0 };
    let publisherDone: (report: PublisherReport) => void = () => undefined;
    const publisherFinished = new Promise<PublisherReport>((resolve) => (publisherDone = resolve));
    const startMemory = await memoryOf(services);
    const startProgress = await progress();
    const started = Date.now();
    worker = new Worker(new URL(import.meta.url), { workerData: { natsUrl: nats.url, eventsPerSecond: EVENTS_PER_SECOND, platforms: PLATFORMS } satisfies PublisherSettings });
    worker.on('message', (report: PublisherReport) => {
      Object.assign(publisherState, report);
      if (report.type === 'done') publisherDone(report);
    });
    worker.on('error', (error) => console.error(`publisher failed: ${error.message}`));

    let next = 0;
    let latenciesNow: number[] = [];
    let windowFailed = 0;
    const reads = autocannon({
      url: base,
      connections: CONNECTIONS,
      overallRate: READS_PER_SECOND,
      duration: DURATION_MS / 1000,
      timeout: 10,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => {
            const n = next++;
            return {
              ...request,
              path: `/agent/reporting?time_range=${RANGES[Math.floor(n / keys.length) % RANGES.length]}`,
              headers: { ...request.headers, authorization: `Bearer ${keys[n % keys.length]}` },
            };
          },
        },
      ],
    });
    reads.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      latenciesNow.push(responseTimeMs);
      if (statusCode !== 200) windowFailed++;
    });

    const samples: Sample[] = [];
    let last = { atMs: 0, acked: 0, ingested: startProgress.ingested };
    const sample = async () => {
      const atMs = Date.now() - started;
      const [{ lag, ingested }, memory] = await Promise.all([progress(), memoryOf(services)]);
      const latencies = latenciesNow.sort((a, b) => a - b);
      const seconds = Math.max(0.001, (atMs - last.atMs) / 1000);
      samples.push({
        atMs,
        published: (publisherState.acked - last.acked) / seconds,
        ingested: (ingested - last.ingested) / seconds,
        lag,
        reads: latencies.length / seconds,
        readsFailed: windowFailed,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        memory,
      });
      last = { atMs, acked: publisherState.acked, ingested };
      latenciesNow = [];
      windowFailed = 0;
      const s = samples[samples.length - 1];
      console.log(
        `  ${pad(fmt(atMs / 1000), 4)} s: published ${fmt(s.published)} events/s, ingested ${fmt(s.ingested)} events/s, lag ${fmt(lag)}; ` +
          `reads ${fmt(s.reads)} req/s, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, non-200 ${fmt(s.readsFailed)}`,
      );
    };
    let sampling = Promise.resolve();
    // Samples every SAMPLE_MS while the load runs, and one when it has ended (not two in a row).
    const timer = setInterval(() => {
      if (Date.now() - started < DURATION_MS - SAMPLE_MS / 2) sampling = sampling.then(sample);
    }, SAMPLE_MS);
    const result = await reads;
    clearInterval(timer);
    await sampling;
    worker.postMessage('stop');
    const published = await publisherFinished;
    await sample();
    const loadEndedMs = Date.now() - started;
    const endMemory = samples[samples.length - 1].memory;

    // Caught up after publishing stopped?
    const drainStarted = Date.now();
    await waitFor(async () => (await progress()).lag === 0, { timeoutMs: 300_000, intervalMs: 250, what: 'reporting-projection to catch up' });
    const drainMs = Date.now() - drainStarted;
    const finalProgress = await progress();
    const projectionMetrics = await scrapeMetrics(services[0].metrics);
    const deadLetters = metricSum(projectionMetrics, 'weave_dead_letters_total');

    // --- the figures ---
    const seconds = loadEndedMs / 1000;
    console.log('');
    console.log(`soak of ${fmt(seconds)} s (${DURATION_MS < 600_000 ? 'SHORT RUN' : 'full run'}):`);
    console.log(
      `  events: ${fmt(published.acked)} published and acknowledged in ${fmt(published.elapsedMs / 1000)} s (${fmt(published.acked / (published.elapsedMs / 1000))} events/s, asked ${fmt(EVENTS_PER_SECOND)}), ` +
        `${fmt(published.failed)} publish failures; ingested ${fmt(finalProgress.ingested - startProgress.ingested)} ` +
        `(${fmt((finalProgress.ingested - startProgress.ingested) / (published.elapsedMs / 1000))} events/s over the publishing time), caught up ${(drainMs / 1000).toFixed(1)} s after the last publish; ` +
        `dead letters ${Number.isNaN(deadLetters) ? 0 : fmt(deadLetters)}`,
    );
    console.log(
      `  reads (GET /agent/reporting, autocannon, ${fmt(READS_PER_SECOND)} req/s asked): ${fmt(result.requests.average)} req/s, p50 ${result.latency.p50} ms, ` +
        `p99 ${result.latency.p99} ms, max ${result.latency.max} ms; ${fmt(result.requests.total)} requests, non-2xx ${fmt(result.non2xx)}, errors ${fmt(result.errors)}, timeouts ${fmt(result.timeouts)}`,
    );
    console.log('');
    const names = services.map((s) => s.name);
    console.log(
      `${pad('t (s)', 6)} ${pad('published/s', 11)} ${pad('ingested/s', 10)} ${pad('lag', 7)} ${pad('reads/s', 7)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('non-200', 7)}  ` +
        names.map((n) => `${n} RSS/heap MB`).join('  '),
    );
    for (const s of samples) {
      console.log(
        `${pad(fmt(s.atMs / 1000), 6)} ${pad(fmt(s.published), 11)} ${pad(fmt(s.ingested), 10)} ${pad(fmt(s.lag), 7)} ${pad(fmt(s.reads), 7)} ${pad(s.p50.toFixed(1), 7)} ${pad(s.p99.toFixed(1), 7)} ${pad(fmt(s.readsFailed), 7)}  ` +
          names.map((n) => pad(`${mb(s.memory[n].rss)}/${mb(s.memory[n].heap)}`, n.length + 13)).join('  '),
      );
    }
    console.log('');
    console.log(`${'service'.padEnd(22)} ${pad('RSS start', 10)} ${pad('RSS end', 10)} ${pad('growth', 8)} ${pad('heap start', 11)} ${pad('heap end', 10)} ${pad('growth', 8)}   (MB)`);
    for (const name of names) {
      const a = startMemory[name];
      const b = endMemory[name];
      const growth = (x: number, y: number) => `${y >= x ? '+' : ''}${mb(y - x)}`;
      console.log(`${name.padEnd(22)} ${pad(mb(a.rss), 10)} ${pad(mb(b.rss), 10)} ${pad(growth(a.rss, b.rss), 8)} ${pad(mb(a.heap), 11)} ${pad(mb(b.heap), 10)} ${pad(growth(a.heap, b.heap), 8)}`);
    }
    await setup.drain();
  } finally {
    await worker?.terminate();
    // The gateway first, so no request in flight meets a service that is gone.
    for (const child of children.reverse()) await child.stop();
    await nats.stop();
    await db.drop();
  }
}

if (isMainThread) await main();
else await publisher(workerData as PublisherSettings);
