/**
 * Mixed-load benchmark (issue 15, target 1): reports read while live events stream in, over
 * many platforms, cold scopes and keys that come and go, through the deployment shape —
 * gateway, reporting-projection, payouts-read and timezone-settings as child processes from
 * dist/, a private nats-server (JetStream, file storage), a fresh PostgreSQL database, Redis.
 *
 * - A publisher (worker thread, live-publisher.ts) streams live events (live-workload.ts) at
 *   MIXED_EVENTS_PER_SECOND over MIXED_PLATFORMS platforms, each acknowledged.
 * - autocannon reads GET /agent/reporting as fast as MIXED_CONNECTIONS connections allow, over
 *   every platform's live and test key and all six ranges. The platforms but the last
 *   MIXED_COLD_PLATFORMS have every scope prepared before the run; the cold ones are opened one
 *   after the other during the run, and a tenth of the requests (MIXED_COLD_SHARE) go to the
 *   newest opened one, whose scopes are asked for the first time (202 "being prepared" is
 *   expected, counted apart). Every MIXED_KEY_CHURN_MS a key is created with `ops key create`
 *   and read with, and the one created before it revoked with `ops key revoke`; that key's reads
 *   then answer 401 (expected for it only) and it leaves the rotation after a few.
 * - Every second: the projection's lag in seconds (now − store time of the oldest event not
 *   acknowledged by reporting-projection, the measure its processing cutoff uses) and each
 *   service's resident set (/proc; the peak VmHWM at the end).
 * After the run: the backlog drained, every report (platform × traffic × range) of a
 * publication that covers the last event is compared with the reference model of everything
 * published (test/support/reference-model.ts); then the services stop and the ceiling of the
 * read path is measured on the same connections: a bare NestJS route doing one NATS
 * request/reply (ceiling-app.ts). Exit code 1 on a mismatch, a 5xx or an unexpected 4xx.
 *
 *   npm run bench:mixed                            (3 minutes)
 *   MIXED_DURATION_MS=30000 npm run bench:mixed    (a short run while developing)
 *   Defaults: MIXED_DURATION_MS=180000 MIXED_EVENTS_PER_SECOND=5000 MIXED_CONNECTIONS=50
 *   MIXED_PLATFORMS=200 MIXED_COLD_PLATFORMS=20 MIXED_COLD_SHARE=0.1 MIXED_KEY_CHURN_MS=10000
 *   MIXED_PUBLISH_INTERVAL_MS=15000 MIXED_CEILING_SECONDS=20
 *   MIXED_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/profiles" profiles every service (written when it stops).
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { Durables, Streams, TIME_RANGES, type TimeRange } from '#libs/contracts';
import { NatsClient, ensureStreams } from '#libs/nats';
import { REDIS_URL, freePort, newTestDatabase, startNats, waitFor, waitForConsumer } from '../test/support/index.js';
import { autocannon, describeLoad, load, cpuOf, residentMemory, seedPlatforms, startChild, startDeployment, waitForHttp, type Child } from './harness.js';
import { startLivePublisher, type LivePublisher } from './live-publisher.js';
import { describeComparison, liveReportsAgainstModel } from './live-reports.js';
import { liveAgent } from './live-workload.js';
import { fmt, machine, percentile, setting } from './support.js';

const DURATION_MS = setting('MIXED_DURATION_MS', 180_000);
const EVENTS_PER_SECOND = setting('MIXED_EVENTS_PER_SECOND', 5000);
const CONNECTIONS = setting('MIXED_CONNECTIONS', 50);
const PLATFORMS = setting('MIXED_PLATFORMS', 200);
const COLD_PLATFORMS = setting('MIXED_COLD_PLATFORMS', 20);
const COLD_SHARE = setting('MIXED_COLD_SHARE', 0.1);
const KEY_CHURN_MS = setting('MIXED_KEY_CHURN_MS', 10_000);
const PUBLISH_INTERVAL_MS = setting('MIXED_PUBLISH_INTERVAL_MS', 15_000);
const CEILING_SECONDS = setting('MIXED_CEILING_SECONDS', 20);
const TARGET = { rps: 3000, p99: 25, lagSeconds: 5, rssMb: 200 };
/** 401s a revoked key is read with before it leaves the rotation (the gateway answers an address 429 after 120 failures a minute). */
const REVOKED_READS = 5;
const MB = 2 ** 20;
const run = promisify(execFile);

/** One API key in the read rotation. */
interface Reader {
  apiKey: string;
  keyId?: string;
  agent: string;
  traffic: 'live' | 'test';
  /** When `ops key revoke` was started for it. */
  revokedAt?: number;
  reads: number;
  okAfterRevoke: number;
  unauthorized: number;
  firstUnauthorizedMs?: number;
}

const mb = (bytes: number) => (bytes / MB).toFixed(0);
const load1 = () => loadavg()[0].toFixed(2);

async function main() {
  console.log(`machine: ${machine()}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(
    `mixed: ${fmt(DURATION_MS / 1000)} s; ${fmt(EVENTS_PER_SECOND)} events/s over ${PLATFORMS} platforms; reads with ${CONNECTIONS} connections over both traffics × ${TIME_RANGES.length} ranges, ` +
      `${(COLD_SHARE * 100).toFixed(0)} % on ${COLD_PLATFORMS} cold platforms opened during the run; a key created and one revoked every ${fmt(KEY_CHURN_MS / 1000)} s; ` +
      `REPORTING_PUBLISH_INTERVAL_MS=${PUBLISH_INTERVAL_MS}`,
  );
  const nats = await startNats();
  const db = newTestDatabase();
  const children: Child[] = [];
  let stopServices: () => Promise<void> = async () => undefined;
  let publisher: LivePublisher | undefined;
  let failed = false;
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
    const setup = await NatsClient.connect({ servers: [nats.url], name: 'mixed-setup' });
    await ensureStreams(setup.manager);
    const nodeArgs = (process.env.MIXED_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const deployment = await startDeployment(common, { publishIntervalMs: PUBLISH_INTERVAL_MS, name: 'mixed', nodeArgs });
    stopServices = deployment.stop;
    const { services, base } = deployment;
    const ops = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, ['dist/apps/ops/src/main.js', ...args], { env: { ...process.env, ...common }, timeout: 30_000 });
      return JSON.parse(stdout) as { api_key?: string; key_id?: string };
    };

    // Platforms and a live and a test key each (the gateway has migrated the identity schema by now).
    const agents = Array.from({ length: PLATFORMS }, (_, p) => liveAgent(p));
    const readersOf: Reader[][] = (await seedPlatforms(db.url, agents, ['live', 'test'], 'bench-mixed')).map((keys, p) =>
      keys.map((key) => ({ apiKey: key.api_key, keyId: key.key_id, agent: agents[p], traffic: key.mode, reads: 0, okAfterRevoke: 0, unauthorized: 0 })),
    );
    const warmPlatforms = PLATFORMS - COLD_PLATFORMS;

    // Every scope of the warm platforms prepared: asked once (202, prepared at once), then until 200.
    const prepareStarted = Date.now();
    const warmScopes = readersOf.slice(0, warmPlatforms).flatMap((readers) => readers.flatMap((reader) => TIME_RANGES.map((range) => ({ reader, range }))));
    const ask = async (reader: Reader, range: TimeRange) => {
      const response = await fetch(`${base}/agent/reporting?time_range=${range}`, { headers: { authorization: `Bearer ${reader.apiKey}` }, signal: AbortSignal.timeout(10_000) });
      await response.arrayBuffer();
      return response.status;
    };
    const pool = async <T>(items: T[], size: number, work: (item: T) => Promise<unknown>) => {
      let i = 0;
      await Promise.all(Array.from({ length: size }, async () => {
        while (i < items.length) await work(items[i++]);
      }));
    };
    await pool(warmScopes, 8, ({ reader, range }) => ask(reader, range));
    await pool(warmScopes, 8, ({ reader, range }) =>
      waitFor(async () => (await ask(reader, range)) === 200, { timeoutMs: 120_000, intervalMs: 250, what: `${reader.agent}/${reader.traffic}/${range} prepared` }),
    );
    console.log(`${fmt(warmScopes.length)} scopes of ${warmPlatforms} platforms prepared in ${((Date.now() - prepareStarted) / 1000).toFixed(1)} s; load ${load1()}`);

    // --- the run ---
    const rotation: Reader[] = readersOf.slice(0, warmPlatforms).flat();
    let openCold = -1;
    let next = 0;
    let coldNext = 0;
    const coldEvery = Math.max(1, Math.round(1 / COLD_SHARE));
    const counts = { ok: 0, preparing: 0, other2xx: 0, expected401: 0, unexpected4xx: 0, status5xx: 0, other: 0 };
    const unexpected: Record<string, number> = {};
    const latencies: number[] = [];
    const okLatencies: number[] = [];
    let window: number[] = [];

    const cpuBefore = cpuOf(services.map((s) => s.child));
    const benchCpuBefore = process.cpuUsage();
    const lastSeq = async () => (await setup.manager.streams.info(Streams.events)).state.last_seq;
    const seqBefore = await lastSeq();
    const live = await startLivePublisher({ natsUrl: nats.url, eventsPerSecond: EVENTS_PER_SECOND, platforms: PLATFORMS });
    publisher = live;
    const started = Date.now();
    live.start();

    const reads = autocannon<{ reader?: Reader }>({
      url: base,
      connections: CONNECTIONS,
      duration: DURATION_MS / 1000,
      timeout: 10,
      requests: [
        {
          method: 'GET',
          setupRequest: (request, context) => {
            const n = next++;
            let reader: Reader;
            let range: TimeRange;
            if (openCold >= 0 && n % coldEvery === 0) {
              // The newest cold platform, scope after scope (live and test × every range).
              const c = coldNext++ % (2 * TIME_RANGES.length);
              reader = readersOf[warmPlatforms + openCold][c < TIME_RANGES.length ? 0 : 1];
              range = TIME_RANGES[c % TIME_RANGES.length];
            } else {
              reader = rotation[n % rotation.length];
              range = TIME_RANGES[Math.floor(n / rotation.length) % TIME_RANGES.length];
            }
            context.reader = reader;
            return { ...request, path: `/agent/reporting?time_range=${range}`, headers: { ...request.headers, authorization: `Bearer ${reader.apiKey}` } };
          },
        },
      ],
    });
    reads.on('response', (client, status, _bytes, ms) => {
      latencies.push(ms);
      window.push(ms);
      const reader = client.requestIterator.context.reader;
      if (reader) reader.reads++;
      if (status === 200) {
        counts.ok++;
        okLatencies.push(ms);
        if (reader?.revokedAt !== undefined) reader.okAfterRevoke++;
      } else if (status === 202) counts.preparing++;
      else if (status < 300) counts.other2xx++;
      else if (status === 401 && reader?.revokedAt !== undefined) {
        counts.expected401++;
        reader.unauthorized++;
        reader.firstUnauthorizedMs ??= Date.now() - reader.revokedAt;
        // Enough seen: out of the rotation.
        if (reader.unauthorized >= REVOKED_READS) {
          const at = rotation.indexOf(reader);
          if (at >= 0) rotation.splice(at, 1);
        }
      } else if (status >= 400 && status < 500) {
        counts.unexpected4xx++;
        unexpected[status] = (unexpected[status] ?? 0) + 1;
      } else if (status >= 500) {
        counts.status5xx++;
        unexpected[status] = (unexpected[status] ?? 0) + 1;
      } else counts.other++;
    });

    // Cold platforms, opened one after the other; the previous one joins the rotation.
    const coldTimer = setInterval(
      () => {
        if (openCold + 1 >= COLD_PLATFORMS) return;
        if (openCold >= 0) rotation.push(...readersOf[warmPlatforms + openCold]);
        openCold++;
        coldNext = 0;
      },
      Math.max(1000, DURATION_MS / Math.max(1, COLD_PLATFORMS)),
    );
    openCold = COLD_PLATFORMS > 0 ? 0 : -1;

    // Keys created and revoked through ops during the run.
    const churned: Reader[] = [];
    let churnFailures = 0;
    let churning = Promise.resolve();
    const churn = async () => {
      const p = Math.floor(Math.random() * warmPlatforms);
      const traffic = churned.length % 2 === 0 ? 'live' : 'test';
      const created = await ops('key', 'create', '--agent-id', liveAgent(p), '--mode', traffic);
      const reader: Reader = { apiKey: created.api_key!, keyId: created.key_id, agent: liveAgent(p), traffic, reads: 0, okAfterRevoke: 0, unauthorized: 0 };
      const previous = churned[churned.length - 1];
      churned.push(reader);
      rotation.push(reader);
      if (previous) {
        previous.revokedAt = Date.now();
        await ops('key', 'revoke', '--key-id', previous.keyId!);
      }
    };
    // One change at a time: a tick that finds the previous one still running is skipped.
    let churnBusy = false;
    let churnSkipped = 0;
    const churnTimer = setInterval(() => {
      if (churnBusy) {
        churnSkipped++;
        return;
      }
      churnBusy = true;
      churning = churn()
        .catch((error: Error) => {
          churnFailures++;
          console.error(`key churn failed: ${error.message}`);
        })
        .finally(() => (churnBusy = false));
    }, KEY_CHURN_MS);

    // Every second: lag and memory.
    interface Second {
      atS: number;
      lagS: number;
      pending: number;
      reads: number;
      p99: number;
      rss: number[];
    }
    const seconds: Second[] = [];
    const peakRss = services.map(() => 0);
    const secondsBehind = async () => {
      const info = await setup.manager.consumers.info(Streams.events, Durables.reportingProjection);
      const pending = info.num_pending + info.num_ack_pending;
      if (pending === 0) return { pending, lagS: 0 };
      const oldest = await setup.manager.streams.getMessage(Streams.events, { seq: info.ack_floor.stream_seq + 1 }).catch(() => null);
      return { pending, lagS: oldest ? Math.max(0, (Date.now() - oldest.time.getTime()) / 1000) : 0 };
    };
    let sampling = false;
    const sampler = setInterval(() => {
      if (sampling) return;
      sampling = true;
      void (async () => {
        const [{ pending, lagS }, memory] = await Promise.all([secondsBehind(), Promise.all(services.map((s) => residentMemory(s.child)))]);
        const sorted = window.sort((a, b) => a - b);
        const s: Second = { atS: (Date.now() - started) / 1000, lagS, pending, reads: window.length, p99: percentile(sorted, 99), rss: memory.map((m) => m.rss) };
        window = [];
        seconds.push(s);
        memory.forEach((m, i) => (peakRss[i] = Math.max(peakRss[i], m.rss)));
        if (seconds.length % 10 === 0) {
          console.log(
            `  ${s.atS.toFixed(0).padStart(4)} s: published ${fmt(live.progress.acked)} (publisher behind ${fmt(live.progress.behind)}), projection lag ${lagS.toFixed(1)} s (${fmt(pending)} events); ` +
              `reads ${fmt(s.reads)}/s, p99 ${s.p99.toFixed(1)} ms, 202 ${fmt(counts.preparing)}, expected 401 ${fmt(counts.expected401)}, unexpected ${fmt(counts.unexpected4xx + counts.status5xx)}; ` +
              `RSS ${services.map((svc, i) => `${svc.name} ${mb(s.rss[i])}`).join(', ')} MB; load ${load1()}`,
          );
        }
      })()
        .catch((error: Error) => console.error(`sample failed: ${error.message}`))
        .finally(() => (sampling = false));
    }, 1000);

    const result = await reads;
    const readsMs = Date.now() - started;
    const stopping = live.stop();
    clearInterval(coldTimer);
    clearInterval(churnTimer);
    await churning;
    const published = await stopping;
    // A service that ended during the run is the finding, not a missing /proc entry.
    const gone = services.filter((s) => s.child.process.exitCode !== null || s.child.process.signalCode !== null);
    if (gone.length > 0) throw new Error(gone.map((s) => `${s.name} ended during the run (${s.child.process.exitCode ?? s.child.process.signalCode})`).join('; '));
    const cpuAfter = cpuOf(services.map((s) => s.child));
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const loadAtEnd = loadavg();

    // The backlog drains; then every report of a publication covering the last event against the model.
    const drainStarted = Date.now();
    await waitForConsumer(setup, Streams.events, Durables.reportingProjection, { timeoutMs: 600_000, intervalMs: 250, what: 'reporting-projection to catch up' });
    const drainS = (Date.now() - drainStarted) / 1000;
    clearInterval(sampler);
    const stored = (await lastSeq()) - seqBefore;
    const peaks = await Promise.all(services.map((s) => residentMemory(s.child)));
    const compareStarted = Date.now();
    const comparison = await liveReportsAgainstModel(setup.connection, PLATFORMS, published, PUBLISH_INTERVAL_MS);
    const compareS = (Date.now() - compareStarted) / 1000;

    // The ceiling on the same connections, once the services are gone.
    await stopServices();
    const ceilingPort = await freePort();
    children.push(startChild('ceiling-responder', 'dist/bench/ceiling-app.js', { NATS_URL: nats.url }, ['responder']));
    const server = startChild('ceiling-server', 'dist/bench/ceiling-app.js', { NATS_URL: nats.url, PORT: ceilingPort }, ['server']);
    children.push(server);
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}/ceiling`;
    await waitForHttp(ceilingUrl, { child: server });
    await load(ceilingUrl, { connections: CONNECTIONS, seconds: Math.min(3, CEILING_SECONDS) });
    const ceilingLoad = loadavg()[0];
    const ceiling = await load(ceilingUrl, { connections: CONNECTIONS, seconds: CEILING_SECONDS });

    // --- the figures ---
    const runS = readsMs / 1000;
    const sortedAll = latencies.sort((a, b) => a - b);
    const sortedOk = okLatencies.sort((a, b) => a - b);
    const rps = result.requests.total / runS;
    const lagMax = Math.max(0, ...seconds.map((s) => s.lagS));
    const lagP50 = percentile(seconds.map((s) => s.lagS).sort((a, b) => a - b), 50);
    const p99 = percentile(sortedOk, 99);
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    const revoked = churned.filter((r) => r.revokedAt !== undefined);
    console.log('');
    console.log(`mixed load of ${runS.toFixed(0)} s (${DURATION_MS < 180_000 ? 'SHORT RUN' : 'full run'}); load average at the end ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')}:`);
    console.log(
      `  events: ${fmt(published.acked)} acknowledged (${fmt(published.published)} sent, ${fmt(published.retried)} sent again) in ${(published.elapsedMs / 1000).toFixed(0)} s = ` +
        `${fmt(published.acked / (published.elapsedMs / 1000))} events/s (asked ${fmt(EVENTS_PER_SECOND)}); ${fmt(stored)} stored; ${fmt(published.created.length)} recommendations`,
    );
    console.log(`  projection lag (sampled every second): max ${lagMax.toFixed(1)} s, median ${lagP50.toFixed(1)} s; drained ${drainS.toFixed(1)} s after the last publish — target ≤ ${TARGET.lagSeconds} s ${met(lagMax <= TARGET.lagSeconds)}`);
    console.log(
      `  reads: ${fmt(rps)} req/s; p50 ${percentile(sortedOk, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (200 answers); ` +
        `p50 ${percentile(sortedAll, 50).toFixed(1)} ms, p99 ${percentile(sortedAll, 99).toFixed(1)} ms (all answers); ${fmt(result.requests.total)} requests`,
    );
    console.log(
      `         200 ${fmt(counts.ok)}, 202 being prepared ${fmt(counts.preparing)}, other 2xx ${fmt(counts.other2xx)}, 401 of revoked keys ${fmt(counts.expected401)}, ` +
        `unexpected 4xx ${fmt(counts.unexpected4xx)}, 5xx ${fmt(counts.status5xx)}${Object.keys(unexpected).length ? ` (${Object.entries(unexpected).map(([s, c]) => `${s}: ${fmt(c)}`).join(', ')})` : ''}, ` +
        `errors ${fmt(result.errors)}, timeouts ${fmt(result.timeouts)}`,
    );
    console.log(
      `         targets: ≥ ${fmt(TARGET.rps)} req/s ${met(rps >= TARGET.rps)}; p99 ≤ ${TARGET.p99} ms ${met(p99 <= TARGET.p99)}; no 5xx ${met(counts.status5xx === 0)}`,
    );
    console.log(
      `  keys: ${churned.length} created and ${revoked.length} revoked with ops during the run (${churnFailures} failed, ${churnSkipped} skipped while the previous one ran); revoked keys answered 401 after ` +
        `${revoked.map((r) => (r.firstUnauthorizedMs === undefined ? 'never read' : `${fmt(r.firstUnauthorizedMs)} ms`)).join(', ') || '—'}; 200 after the revoke began: ${fmt(revoked.reduce((s, r) => s + r.okAfterRevoke, 0))}; ` +
        `reads with these keys ${churned.map((r) => fmt(r.reads)).join(', ')}`,
    );
    console.log(`  cold platforms opened: ${Math.max(0, openCold + 1)} of ${COLD_PLATFORMS}`);
    console.log(`  ceiling (bare NestJS route + one NATS request/reply, ${CONNECTIONS} connections, ${CEILING_SECONDS} s, load ${ceilingLoad.toFixed(2)}): ${describeLoad(ceiling)}`);
    console.log(`  reads reach ${((100 * rps) / ceiling.rps).toFixed(0)} % of the ceiling's req/s; p99 ${(p99 / Math.max(1, ceiling.p99)).toFixed(1)} × the ceiling's`);
    console.log('');
    console.log(`${'service'.padEnd(22)} ${'RSS max (sampled)'.padStart(18)} ${'peak (VmHWM)'.padStart(13)} ${'CPU s'.padStart(7)} ${'CPU ms/read'.padStart(12)} ${'CPU ms/1k events'.padStart(17)}`);
    services.forEach((s, i) => {
      const cpu = cpuAfter[i] - cpuBefore[i];
      console.log(
        `${s.name.padEnd(22)} ${`${mb(peakRss[i])} MB`.padStart(18)} ${`${mb(peaks[i].peak)} MB`.padStart(13)} ${cpu.toFixed(1).padStart(7)} ${((1000 * cpu) / result.requests.total).toFixed(3).padStart(12)} ${((1000 * 1000 * cpu) / published.acked).toFixed(1).padStart(17)}`,
      );
    });
    console.log(`${'bench (autocannon + publisher)'.padEnd(22)} ${''.padStart(18)} ${''.padStart(13)} ${((benchCpu.user + benchCpu.system) / 1e6).toFixed(1).padStart(7)}`);
    const maxRss = Math.max(...peaks.map((p) => p.peak));
    console.log(`  memory: every service's RSS ≤ ${TARGET.rssMb} MB ${met(maxRss <= TARGET.rssMb * MB)} (highest peak ${mb(maxRss)} MB)`);
    console.log('');
    for (const line of describeComparison(comparison, PLATFORMS, compareS)) console.log(line);
    failed = comparison.mismatches.length > 0 || counts.status5xx > 0 || counts.unexpected4xx > 0;
    await setup.drain();
  } finally {
    await publisher?.terminate();
    await stopServices();
    for (const child of children.reverse()) await child.stop();
    await nats.stop();
    await db.drop();
  }
  if (failed) process.exitCode = 1;
}

await main();
