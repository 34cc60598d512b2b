/**
 * Read benchmark: GET /agent/reporting?time_range=7d through the real deployment shape — the
 * gateway and reporting-projection as separate processes from dist/, a private nats-server, a
 * fresh PostgreSQL database, Redis — under autocannon (50 connections, 20 s). Beside it, from
 * the same run, the ceiling of the architecture: a bare NestJS-on-Fastify child process whose one
 * route does one NATS request/reply to a trivial responder (another child process) on the same
 * private NATS.
 *
 * The gateway and the ceiling run side by side and are loaded in turns (ROUNDS of each); every
 * load prints the CPU each process spent per request (from /proc: independent of what else runs
 * on the machine, unlike req/s) and the load average around it.
 *
 *   npm run bench:read                      (DURATION=5 npm run bench:read for a quick run)
 *   CONNECTIONS=50 DURATION=20 EVENTS=4000 ROUNDS=1 are the defaults; the services read the
 *   environment (e.g. RATE_LIMIT_PER_KEY_PER_MINUTE=0 measures without the per-key limit);
 *   GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the gateway; RATE=1000 loads at
 *   a fixed 1,000 req/s (CPU per request of two builds compared at the same rate on a busy machine).
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { Durables, Streams } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { REDIS_URL, connectProducer, freePort, newTestDatabase, startNats, waitFor, type WireEvent } from '../test/support/index.js';
import { cpuOf, describeLoad, load, startChild, waitForHttp, type Child, type LoadFigures } from './harness.js';
import { fmt, machine } from './support.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const SECONDS = Number(process.env.DURATION ?? 20);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const EVENTS = Number(process.env.EVENTS ?? 4000);
const AGENT = 'agent_bench_read';
const TARGET_RPS = 5000;
const TARGET_P99_MS = 25;
/** Issue 15: the gateway at ≥ 0.8 of the ceiling's req/s, with a p99 at most 1.3 × the ceiling's, in the same run. */
const CEILING_RATIO_TARGET = 0.8;
const CEILING_P99_TARGET = 1.3;
const ROUNDS = Number(process.env.ROUNDS ?? 1);
/** RATE=n: the measured loads at n req/s instead of as fast as answers come (CPU per request compared at the same rate). */
const RATE = process.env.RATE ? Number(process.env.RATE) : undefined;
const run = promisify(execFile);

/**
 * A realistic mix over the last six days, mostly for the benchmark's platform (live), some for
 * its test traffic and for two other platforms: every recommendation is generated and shown,
 * some are clicked, engaged or converted, a third are billable, and most billable ones get an
 * accounting entry (a few in EUR, a few reversals); one reconciliation watermark at the end.
 */
function* events(total: number): Generator<WireEvent> {
  const now = Date.now();
  const agents = [AGENT, AGENT, AGENT, 'agent_bench_other_1', 'agent_bench_other_2'];
  let emitted = 0;
  for (let r = 0; emitted < total - 1 && r < total; r++) {
    const agent = agents[r % agents.length];
    const traffic = r % 9 === 0 ? 'test' : 'live';
    // Between 5 minutes and 6 days ago, so every event is before the first processing cutoff.
    const created = now - 5 * 60_000 - ((r * 7_919_113) % (6 * 86_400_000));
    const base = { recommendation_id: `rec_read_${r}`, agent_id: agent, traffic, recommendation_created_at: new Date(created).toISOString() };
    const billable = r % 3 === 0;
    const kinds = ['generated', 'shown'];
    if (r % 4 === 0) kinds.push('clicked');
    if (r % 8 === 0) kinds.push(r % 16 === 0 ? 'converted' : 'engaged');
    for (const [i, kind] of kinds.entries()) {
      const id = `evt_read_${r}_${kind}`;
      emitted++;
      yield {
        subject: `events.recommendation.${kind}`,
        id,
        payload: { event_id: id, ...base, occurred_at: new Date(created + i * 1000).toISOString(), billable: billable && kind === 'clicked' },
      };
    }
    if (billable && r % 5 !== 0) {
      const id = `acc_read_${r}`;
      emitted++;
      yield {
        subject: 'events.accounting.entry',
        id,
        payload: {
          entry_id: id,
          agent_id: agent,
          traffic,
          recommendation_id: base.recommendation_id,
          amount_micros: r % 41 === 0 ? -250_000 : 100_000 + ((r * 31) % 2_000_000),
          currency: r % 23 === 0 ? 'EUR' : 'USD',
          recorded_at: new Date(created + 3_600_000).toISOString(),
        },
      };
    }
  }
  const id = 'rec_read_watermark';
  yield { subject: 'events.accounting.reconciled', id, payload: { event_id: id, traffic: 'live', reconciled_through: new Date(now - 86_400_000).toISOString() } };
}

async function publish(url: string): Promise<number> {
  const producer = await connectProducer(url);
  let count = 0;
  let inFlight: Promise<unknown>[] = [];
  for (const event of events(EVENTS)) {
    inFlight.push(producer.publish(event));
    count++;
    if (inFlight.length >= 500) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  await producer.close();
  return count;
}

async function ops(env: Record<string, string>, ...args: string[]): Promise<Record<string, string>> {
  const { stdout } = await run(process.execPath, ['dist/apps/ops/src/main.js', ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
  return JSON.parse(stdout) as Record<string, string>;
}

function verdict(f: LoadFigures): string {
  const rps = f.rps >= TARGET_RPS ? 'met' : 'NOT met';
  const p99 = f.p99 <= TARGET_P99_MS ? 'met' : 'NOT met';
  const non2xx = f.non2xx === 0 && f.errors === 0 ? 'met' : 'NOT met';
  return `targets: ≥ ${fmt(TARGET_RPS)} req/s ${rps}; p99 ≤ ${TARGET_P99_MS} ms ${p99}; non-2xx = 0 ${non2xx}`;
}

async function main() {
  console.log(`machine: ${machine()}`);
  const nats = await startNats();
  const db = newTestDatabase();
  const children: Child[] = [];
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1', TRACKING_SIGNING_SECRET: 'bench-read-tracking-signing-secret' };
    const reportingPort = await freePort();
    const reporting = startChild('reporting-projection', 'dist/apps/reporting-projection/src/main.js', { ...common, REPORTING_HTTP_PORT: reportingPort });
    children.push(reporting);
    await waitForHttp(`http://127.0.0.1:${reportingPort}/health/ready`, { child: reporting });
    const gatewayPort = await freePort();
    // GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the gateway.
    const nodeArgs = process.env.GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const gateway = startChild('gateway', 'dist/apps/gateway/src/main.js', { ...common, PORT: gatewayPort }, [], nodeArgs);
    children.push(gateway);
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/health/ready`, { child: gateway });

    await ops(common, 'platform', 'create', '--agent-id', AGENT);
    const { api_key: apiKey } = await ops(common, 'key', 'create', '--agent-id', AGENT, '--mode', 'live');

    const published = await publish(nats.url);
    const inspector = await NatsClient.connect({ servers: [nats.url], name: 'bench-inspector' });
    await waitFor(
      async () => {
        const info = await inspector.manager.consumers.info(Streams.events, Durables.reportingProjection);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'projection caught up' },
    );
    await inspector.drain();

    const url = `http://127.0.0.1:${gatewayPort}/agent/reporting?time_range=7d`;
    const headers = { authorization: `Bearer ${apiKey}` };
    const statuses: number[] = [];
    const report = await waitFor(
      async () => {
        const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
        statuses.push(response.status);
        const body = (await response.json()) as Record<string, unknown>;
        return response.status === 200 ? body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the report to answer 200' },
    );
    console.log(
      `published ${fmt(published)} events; first answers ${[...new Set(statuses)].join(' → ')}; report 7d: ` +
        `exposures ${fmt(Number(report.exposures))}, clicks ${fmt(Number(report.clicks))}, conversions ${fmt(Number(report.conversions))}, ` +
        `earnings_micros ${fmt(Number(report.earnings_micros))}, coverage ${String(report.earnings_coverage)}`,
    );

    const ceilingPort = await freePort();
    const responder = startChild('ceiling-responder', 'dist/bench/ceiling-app.js', { NATS_URL: nats.url }, ['responder']);
    children.push(responder);
    const server = startChild('ceiling-server', 'dist/bench/ceiling-app.js', { NATS_URL: nats.url, PORT: ceilingPort }, ['server']);
    children.push(server);
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}/ceiling`;
    await waitForHttp(ceilingUrl, { child: server });

    // The gateway and the ceiling take turns (ROUNDS of each), so load from outside the bench falls on both alike.
    const measure = async (target: string, measured: Child[], requestHeaders?: Record<string, string>) => {
      await load(target, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, headers: requestHeaders });
      const loadBefore = loadavg()[0];
      const before = cpuOf(measured);
      const benchBefore = process.cpuUsage();
      const figures = await load(target, { connections: CONNECTIONS, seconds: SECONDS, headers: requestHeaders, overallRate: RATE });
      const after = cpuOf(measured);
      const bench = process.cpuUsage(benchBefore);
      const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, figures.total);
      return {
        figures,
        cpu: measured.map((child, i) => ({ name: child.name, us: perRequest(after[i] - before[i]) })).concat({ name: 'load generator', us: perRequest((bench.user + bench.system) / 1e6) }),
        load: `load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
      };
    };
    const rounds: { gateway: Awaited<ReturnType<typeof measure>>; ceiling: Awaited<ReturnType<typeof measure>> }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push({ gateway: await measure(url, [gateway, reporting], headers), ceiling: await measure(ceilingUrl, [server, responder]) });
    }

    const describeCpu = (cpu: { name: string; us: number }[]) => `CPU per request: ${cpu.map(({ name, us }) => `${name} ${us.toFixed(0)} µs`).join(', ')}`;
    console.log('');
    console.log(`GET /agent/reporting?time_range=7d, ${CONNECTIONS} connections, ${SECONDS} s (after ${WARMUP_SECONDS} s warm-up), autocannon in the bench process${RATE ? ` at ${fmt(RATE)} req/s` : ''}, ${ROUNDS} round(s) gateway then ceiling;`);
    console.log(
      `gateway → NATS → reporting-projection (child processes from dist, LOG_LEVEL=warn, RATE_LIMIT_PER_KEY_PER_MINUTE=${process.env.RATE_LIMIT_PER_KEY_PER_MINUTE ?? 'default (600000)'}${nodeArgs.length ? `, node ${nodeArgs.join(' ')}` : ''});`,
    );
    console.log(`ceiling: bare NestJS-on-Fastify child process, one route = one NATS request/reply to a trivial responder child process:`);
    for (const [i, { gateway: g, ceiling: c }] of rounds.entries()) {
      console.log(`round ${i + 1}`);
      console.log(`  gateway: ${describeLoad(g.figures)}`);
      console.log(`    ${describeCpu(g.cpu)}; ${g.load}`);
      console.log(`    ${verdict(g.figures)}`);
      console.log(`  ceiling: ${describeLoad(c.figures)}`);
      console.log(`    ${describeCpu(c.cpu)}; ${c.load}`);
      const ratio = g.figures.rps / c.figures.rps;
      const p99 = g.figures.p99 / Math.max(1, c.figures.p99);
      console.log(
        `  gateway/ceiling: ${ratio.toFixed(2)} of its req/s (target ≥ ${CEILING_RATIO_TARGET}: ${ratio >= CEILING_RATIO_TARGET ? 'met' : 'NOT met'}), ` +
          `p99 ${p99.toFixed(2)}× (target ≤ ${CEILING_P99_TARGET}×: ${p99 <= CEILING_P99_TARGET ? 'met' : 'NOT met'})`,
      );
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
    await nats.stop();
    await db.drop();
  }
}

await main();
