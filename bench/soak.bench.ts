/**
 * Soak benchmark (issue 7, "Load"): events ingested and reports read at the same time, for
 * minutes, through the deployment shape — gateway, reporting-projection, payouts-read and
 * timezone-settings as child processes from dist/, a private nats-server (JetStream, file
 * storage), a fresh PostgreSQL database, Redis.
 *
 * - A publisher (a worker thread, live-publisher.ts) publishes the live stream of
 *   live-workload.ts (lifecycle events, later clicks and conversions, accounting entries,
 *   copies, watermarks) for SOAK_PLATFORMS platforms at a steady SOAK_EVENTS_PER_SECOND to
 *   JetStream, each acknowledged (PubAck), as internal producers do.
 * - autocannon reads GET /agent/reporting at a steady SOAK_READS_PER_SECOND over
 *   SOAK_CONNECTIONS connections, rotating over the platforms' live keys and four time ranges.
 * - Every SOAK_SAMPLE_MS: events/s published and ingested, the consumer lag of
 *   reporting-projection (EVENTS consumer info: not yet delivered + delivered but not acked),
 *   req/s and p50/p99 of the reads in that interval, and each service's memory (resident set
 *   and V8 heap used, from its /metrics).
 * At the end: tables of the samples and of each service's memory at start, at the end, its
 * growth and its peak (VmHWM); the time the projection took to catch up once publishing
 * stopped; then every report (platform × traffic × range) of a publication covering the last
 * event against the reference model of everything published (exit code 1 on a mismatch).
 *
 *   npm run bench:soak                      (10 minutes)
 *   SOAK_DURATION_MS=60000 npm run bench:soak
 *   Defaults: SOAK_DURATION_MS=600000 SOAK_EVENTS_PER_SECOND=2000 SOAK_READS_PER_SECOND=500
 *   SOAK_CONNECTIONS=20 SOAK_PLATFORMS=20 SOAK_SAMPLE_MS=30000 SOAK_PUBLISH_INTERVAL_MS=15000
 */
import { Durables, Streams } from '#libs/contracts';
import { NatsClient, ensureStreams } from '#libs/nats';
import { REDIS_URL, newTestDatabase, startNats, waitFor, waitForConsumer } from '../test/support/index.js';
import { autocannon, metricSum, residentMemory, scrapeMetrics, seedPlatforms, startDeployment, type Service } from './harness.js';
import { startLivePublisher, type LivePublisher } from './live-publisher.js';
import { describeComparison, liveReportsAgainstModel } from './live-reports.js';
import { liveAgent } from './live-workload.js';
import { fmt, machine, percentile, setting } from './support.js';

const DURATION_MS = setting('SOAK_DURATION_MS', 600_000);
const EVENTS_PER_SECOND = setting('SOAK_EVENTS_PER_SECOND', 2000);
const READS_PER_SECOND = setting('SOAK_READS_PER_SECOND', 500);
const CONNECTIONS = setting('SOAK_CONNECTIONS', 20);
const PLATFORMS = setting('SOAK_PLATFORMS', 20);
const SAMPLE_MS = setting('SOAK_SAMPLE_MS', 30_000);
const PUBLISH_INTERVAL_MS = setting('SOAK_PUBLISH_INTERVAL_MS', 15_000);
const RANGES = ['today', '1d', '7d', '30d'];

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
  let stopServices: () => Promise<void> = async () => undefined;
  let publisher: LivePublisher | undefined;
  let failed = false;
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
    const setup = await NatsClient.connect({ servers: [nats.url], name: 'soak-setup' });
    await ensureStreams(setup.manager);
    const deployment = await startDeployment(common, { publishIntervalMs: PUBLISH_INTERVAL_MS, name: 'soak' });
    stopServices = deployment.stop;
    const { services, base } = deployment;

    // Platforms and live keys (the gateway has migrated the identity schema by now).
    const agents = Array.from({ length: PLATFORMS }, (_, p) => liveAgent(p));
    const keys = (await seedPlatforms(db.url, agents, ['live'], 'bench-soak')).map(([key]) => key.api_key);

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
    const startMemory = await memoryOf(services);
    const startProgress = await progress();
    const live = await startLivePublisher({ natsUrl: nats.url, eventsPerSecond: EVENTS_PER_SECOND, platforms: PLATFORMS });
    publisher = live;
    const started = Date.now();
    live.start();

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
        published: (live.progress.acked - last.acked) / seconds,
        ingested: (ingested - last.ingested) / seconds,
        lag,
        reads: latencies.length / seconds,
        readsFailed: windowFailed,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        memory,
      });
      last = { atMs, acked: live.progress.acked, ingested };
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
    const published = await live.stop();
    await sample();
    const loadEndedMs = Date.now() - started;
    const endMemory = samples[samples.length - 1].memory;

    // Caught up after publishing stopped?
    const drainStarted = Date.now();
    await waitForConsumer(setup, Streams.events, Durables.reportingProjection, { timeoutMs: 300_000, intervalMs: 250, what: 'reporting-projection to catch up' });
    const drainMs = Date.now() - drainStarted;
    const finalProgress = await progress();
    const peaks = await Promise.all(services.map((s) => residentMemory(s.child)));
    const projectionMetrics = await scrapeMetrics(services[0].metrics);
    const deadLetters = metricSum(projectionMetrics, 'weave_dead_letters_total');

    // --- the figures ---
    const seconds = loadEndedMs / 1000;
    console.log('');
    console.log(`soak of ${fmt(seconds)} s (${DURATION_MS < 600_000 ? 'SHORT RUN' : 'full run'}):`);
    console.log(
      `  events: ${fmt(published.acked)} published and acknowledged in ${fmt(published.elapsedMs / 1000)} s (${fmt(published.acked / (published.elapsedMs / 1000))} events/s, asked ${fmt(EVENTS_PER_SECOND)}), ` +
        `${fmt(published.retried)} sent again; ingested ${fmt(finalProgress.ingested - startProgress.ingested)} ` +
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
    console.log(
      `${'service'.padEnd(22)} ${pad('RSS start', 10)} ${pad('RSS end', 10)} ${pad('growth', 8)} ${pad('RSS max', 8)} ${pad('peak', 8)} ${pad('heap start', 11)} ${pad('heap end', 10)} ${pad('growth', 8)}   (MB; max: of the samples, peak: VmHWM)`,
    );
    names.forEach((name, i) => {
      const a = startMemory[name];
      const b = endMemory[name];
      const growth = (x: number, y: number) => `${y >= x ? '+' : ''}${mb(y - x)}`;
      const max = Math.max(...samples.map((s) => s.memory[name].rss));
      console.log(
        `${name.padEnd(22)} ${pad(mb(a.rss), 10)} ${pad(mb(b.rss), 10)} ${pad(growth(a.rss, b.rss), 8)} ${pad(mb(max), 8)} ${pad(mb(peaks[i].peak), 8)} ${pad(mb(a.heap), 11)} ${pad(mb(b.heap), 10)} ${pad(growth(a.heap, b.heap), 8)}`,
      );
    });

    console.log('');
    const compareStarted = Date.now();
    const comparison = await liveReportsAgainstModel(setup.connection, PLATFORMS, published, PUBLISH_INTERVAL_MS);
    for (const line of describeComparison(comparison, PLATFORMS, (Date.now() - compareStarted) / 1000)) console.log(line);
    failed = comparison.mismatches.length > 0;
    await setup.drain();
  } finally {
    await publisher?.terminate();
    await stopServices();
    await nats.stop();
    await db.drop();
  }
  if (failed) process.exitCode = 1;
}

await main();
