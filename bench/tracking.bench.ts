/**
 * Tracking benchmark: GET /track/exposure and GET /track/click through the real deployment shape
 * (reporting-projection, payouts-read, timezone-settings and the gateway as child processes from
 * dist/, a private nats-server, a fresh PostgreSQL database, a private redis-server) under autocannon: LINKS
 * distinct signed links (default 100,000), each opened once, half exposure links and half click
 * links of as many distinct recommendations (disjoint: a lost exposure cannot hide behind its
 * recommendation's click, which counts as an exposure too). The tokens are signed as the gateway
 * signs them (its signTrackingToken, its secret), so the gateway verifies, checks (platform
 * status, the per-address limit and the once-only claim in Redis) and publishes each one as it
 * would an end user's.
 *
 * Beside it, in the same run, the ceiling: a plain Fastify child process whose one route
 * publishes one event to JetStream on the same private NATS, waits for its PubAck and answers 204
 * (bench/publish-ceiling-app.ts), loaded with as many requests and connections.
 *
 * While the rounds run, nothing consumes either side's events: reporting-projection is stopped
 * after the warm-up (it drains and exits, as at a restart) and started again after the rounds,
 * when it drains the backlog; the ceiling's stream has no consumer at all. With
 * PROJECTION_BESIDE=1 the projection consumes the gateway's events during its rounds instead, on
 * the same cores (the conditions of the figures before this option).
 *
 * Afterwards: every measured link was published exactly once (weave_tracking_requests_total
 * {outcome="published"} rose by LINKS, nothing else did; EVENTS holds LINKS more messages) and
 * counted exactly once in the report (GET /agent/reporting through the gateway, from a
 * publication after the projection caught up: exposures = LINKS, clicks = LINKS / 2); then
 * REPEATS of the links opened again publish nothing and change no count.
 *
 *   npm run bench:tracking                  (LINKS=20000 npm run bench:tracking for a quick run)
 *   LINKS=100000 CONNECTIONS=20 WARMUP=5000 REPEATS=10000 ROUNDS=4 are the defaults (the gateway
 *   and the ceiling take turns, ROUNDS of each, the links split between the gateway's rounds); the services read the
 *   environment; GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the gateway;
 *   RATE=2000 loads at a fixed 2,000 req/s (latency at a given rate, CPU per request of two builds);
 *   PROJECTION_BESIDE=1 keeps reporting-projection consuming during the gateway's rounds.
 */
import { loadavg } from 'node:os';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Durables, Streams, type Report } from '#libs/contracts';
import { signTrackingToken, trackingExpiry, type SignedTrackingClaims } from '../apps/gateway/src/tracking/tracking-token.js';
import { Redis } from 'ioredis';
import { freePort, newTestDatabase, startNats, startPrivateRedis, waitFor, waitForConsumer } from '../test/support/index.js';
import { autocannon, cpuOf, describeLoad, figuresOf, metricSum, scrapeMetrics, seedPlatforms, startChild, startDeployment, waitForHttp, type Child, type LoadFigures } from './harness.js';
import { fmt, machine, setting } from './support.js';

const LINKS = setting('LINKS', 100_000);
const CONNECTIONS = setting('CONNECTIONS', 20);
const WARMUP = setting('WARMUP', 5_000);
const REPEATS = setting('REPEATS', 10_000);
const ROUNDS = setting('ROUNDS', 4);
/** RATE=n: the measured loads at n req/s instead of as fast as answers come. */
const RATE = process.env.RATE ? Number(process.env.RATE) : undefined;
/** PROJECTION_BESIDE=1: reporting-projection consumes the gateway's events during its rounds (default: stopped for the rounds). */
const PROJECTION_BESIDE = process.env.PROJECTION_BESIDE === '1';
const NAME = 'tracking';
/** The secret startDeployment gives the gateway. */
const SECRET = `bench-${NAME}-tracking-signing-secret`;
const AGENT = 'agent_bench_track';
/** Warm-up links belong to another platform, so the measured platform's report counts the measured links only. */
const WARMUP_AGENT = 'agent_bench_track_warmup';
const LANDING = 'https://shop.example/trail-runner-2?utm_source=weave';
/** Targets: ≥ 0.5 of the ceiling's req/s, p99 ≤ 20 ms, every first open counted exactly once. */
const CEILING_RATIO_TARGET = 0.5;
const TARGET_P99_MS = 20;
const PUBLISH_INTERVAL_MS = 1000;

/** `count` links of `agent`: even indexes exposure links, odd ones click links, each of its own recommendation. */
function signedLinks(agent: string, prefix: string, count: number): string[] {
  const now = new Date();
  const exp = trackingExpiry(now, 30);
  const links: string[] = [];
  for (let i = 0; i < count; i++) {
    const clicked = i % 2 === 1;
    const claims: SignedTrackingClaims = {
      v: 1,
      kind: clicked ? 'clicked' : 'shown',
      recommendation_id: `rec_${prefix}_${i}`,
      agent_id: agent,
      traffic: 'live',
      // Within the last hour: in today's, 1d's and 7d's report alike.
      recommendation_created_at: new Date(now.getTime() - 60_000 - (i % 3_000_000)).toISOString(),
      ad_id: `ad_bench_${i % 997}`,
      product_id: `prod_bench_${i % 991}`,
      exp,
      ...(clicked ? { landing_url: LANDING } : {}),
    };
    links.push(`/track/${clicked ? 'click' : 'exposure'}?t=${signTrackingToken(claims, SECRET)}`);
  }
  return links;
}

/** One autocannon run that requests each of `paths` once (`amount` = their number), spread over the connections. */
async function openEach(base: string, paths: string[], rate?: number): Promise<LoadFigures & { setups: number; seconds: number }> {
  let next = 0;
  // Timed here, to the last answer: autocannon ends an `amount` run on its one-second sampling
  // tick, so its own duration and per-second average come in whole seconds (25,000 requests in
  // 3 or 6 s, whatever the rate in between).
  const started = performance.now();
  let lastAnswer = started;
  const result = await autocannon<object>({
    url: base,
    connections: CONNECTIONS,
    amount: paths.length,
    timeout: 10,
    overallRate: rate,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }),
        onResponse: () => {
          lastAnswer = performance.now();
        },
      },
    ],
  });
  const seconds = (lastAnswer - started) / 1000;
  // 204 and 302 are both what a valid link answers.
  const figures = figuresOf(result, ['302']);
  return { ...figures, rps: figures.total / seconds, setups: next, seconds };
}

/**
 * The figures of several runs as one: requests per second over their summed durations; the
 * latency percentiles are the worst round's (autocannon keeps no histogram to merge).
 */
function combined(runs: (LoadFigures & { setups: number; seconds: number })[]): LoadFigures & { setups: number; seconds: number } {
  const sum = (pick: (f: LoadFigures & { setups: number; seconds: number }) => number) => runs.reduce((total, f) => total + pick(f), 0);
  const worst = (pick: (f: LoadFigures) => number) => Math.max(...runs.map(pick));
  const seconds = sum((f) => f.seconds);
  const statuses: Record<string, number> = {};
  for (const f of runs) for (const [status, count] of Object.entries(f.statuses ?? {})) statuses[status] = (statuses[status] ?? 0) + count;
  return {
    rps: sum((f) => f.total) / seconds,
    p50: worst((f) => f.p50),
    p90: worst((f) => f.p90),
    p99: worst((f) => f.p99),
    max: worst((f) => f.max),
    mean: sum((f) => f.mean * f.total) / Math.max(1, sum((f) => f.total)),
    total: sum((f) => f.total),
    ok: sum((f) => f.ok),
    non2xx: sum((f) => f.non2xx),
    statuses,
    errors: sum((f) => f.errors),
    timeouts: sum((f) => f.timeouts),
    setups: sum((f) => f.setups),
    seconds,
  };
}

/** A ceiling's paths: the same route every time (its events are told apart by the server). */
const ceilingPaths = (count: number) => Array.from({ length: count }, () => '/ceiling');

async function main() {
  console.log(`machine: ${machine()}`);
  console.log(`started ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const nats = await startNats();
  // A Redis of its own: its counters are the bench's alone (socket reads per request show how the gateway batches its commands).
  const redis = await startPrivateRedis();
  const redisInfo = new Redis(redis.url, { lazyConnect: true });
  const db = newTestDatabase();
  const nodeArgs = process.env.GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const children: Child[] = [];
  let deployment: Awaited<ReturnType<typeof startDeployment>> | undefined;
  const inspector = await connect({ servers: nats.url, name: 'bench-tracking-inspector' });
  try {
    // A limit per address far above the load (one address sends everything here), so every request still runs the Redis check.
    const env = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL: redis.url, LOG_LEVEL: 'warn', HOST: '127.0.0.1', TRACKING_LIMIT_PER_IP_PER_MINUTE: '100000000' };
    deployment = await startDeployment(env, { publishIntervalMs: PUBLISH_INTERVAL_MS, name: NAME, nodeArgs });
    const { base, services } = deployment;
    const gateway = services.find((s) => s.name === 'gateway')!;
    const [[key]] = await seedPlatforms(db.url, [AGENT, WARMUP_AGENT], ['live'], 'bench-tracking-seed');

    const ceilingPort = await freePort();
    const ceiling = startChild('publish-ceiling', 'dist/bench/publish-ceiling-app.js', { NATS_URL: nats.url, PORT: ceilingPort });
    children.push(ceiling);
    const ceilingBase = `http://127.0.0.1:${ceilingPort}`;
    await waitForHttp(`${ceilingBase}/ceiling`, { status: 204, child: ceiling });

    const started = Date.now();
    const measured = signedLinks(AGENT, 'track', LINKS);
    const warmup = signedLinks(WARMUP_AGENT, 'warmup', WARMUP);
    console.log(`signed ${fmt(LINKS)} measured and ${fmt(WARMUP)} warm-up links in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const jsm = await jetstreamManager(inspector);
    const streamMessages = async () => (await jsm.streams.info(Streams.events)).state.messages;
    const outcomes = async () => {
      const samples = await scrapeMetrics(gateway.metrics);
      const of = (outcome: string) => metricSum(samples, 'weave_tracking_requests_total', { outcome }) || 0;
      return {
        published: of('published'),
        duplicate: of('duplicate'),
        deferred: of('deferred'),
        other: ['expired', 'suspended', 'rate_limited', 'invalid', 'unavailable'].reduce((sum, o) => sum + of(o), 0),
        // Checks skipped because Redis did not answer in RATE_LIMIT_REDIS_TIMEOUT_MS: those events were published without a claim.
        unchecked: metricSum(samples, 'weave_tracking_checks_fail_open_total') || 0,
      };
    };

    // Warm-up: both servers, outside the measured figures (the gateway's on another platform's links).
    await openEach(base, warmup);
    await openEach(ceilingBase, ceilingPaths(WARMUP));

    /** Commands Redis ran and the socket reads they came in (INFO stats). */
    const redisStats = async () => {
      const info = await redisInfo.info('stats');
      const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
      return { commands: field('total_commands_processed'), reads: field('total_reads_processed') };
    };
    const measure = async (target: string, paths: string[], processes: Child[]) => {
      const loadBefore = loadavg()[0];
      const before = cpuOf(processes);
      const redisBefore = await redisStats();
      const benchBefore = process.cpuUsage();
      const figures = await openEach(target, paths, RATE);
      const after = cpuOf(processes);
      const bench = process.cpuUsage(benchBefore);
      const redisAfter = await redisStats();
      const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, figures.total);
      const cpu = processes.map((child, i) => `${child.name} ${perRequest(after[i] - before[i]).toFixed(0)} µs`).concat(`load generator ${perRequest((bench.user + bench.system) / 1e6).toFixed(0)} µs`);
      const redisPerRequest = (n: number) => (n / Math.max(1, figures.total)).toFixed(2);
      return {
        figures,
        cpu: `CPU per request: ${cpu.join(', ')}; Redis per request: ${redisPerRequest(redisAfter.commands - redisBefore.commands)} commands in ${redisPerRequest(redisAfter.reads - redisBefore.reads)} socket reads`,
        load: `load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
      };
    };

    const streamBefore = await streamMessages();
    const outcomesBefore = await outcomes();
    const reporting = services.find((s) => s.name === 'reporting-projection')!;
    const beside = PROJECTION_BESIDE ? [reporting.child] : [];
    if (!PROJECTION_BESIDE) await deployment.stopService(reporting.name);
    // The gateway and the ceiling take turns (ROUNDS of each, the links split between the gateway's), so load from outside the bench falls on both alike.
    const rounds: { gateway: Awaited<ReturnType<typeof measure>>; ceiling: Awaited<ReturnType<typeof measure>> }[] = [];
    const perRound = Math.ceil(LINKS / ROUNDS);
    for (let round = 0; round < ROUNDS; round++) {
      const chunk = measured.slice(round * perRound, (round + 1) * perRound);
      rounds.push({ gateway: await measure(base, chunk, [gateway.child, ...beside]), ceiling: await measure(ceilingBase, ceilingPaths(chunk.length), [ceiling]) });
    }
    const g = { figures: combined(rounds.map((r) => r.gateway.figures)) };
    const c = { figures: combined(rounds.map((r) => r.ceiling.figures)) };

    // Every measured link published once, and counted once.
    if (!PROJECTION_BESIDE) await deployment.startService(reporting.name);
    await waitForConsumer({ connection: inspector }, Streams.events, Durables.reportingProjection, { timeoutMs: 300_000, intervalMs: 500, what: 'the projection caught up' });
    const caughtUp = Date.now();
    const streamAfter = await streamMessages();
    const outcomesAfter = await outcomes();
    const report = async (since: number) =>
      waitFor(
        async () => {
          const response = await fetch(`${base}/agent/reporting?time_range=7d`, { headers: { authorization: `Bearer ${key.api_key}` }, signal: AbortSignal.timeout(5000) });
          const body = (await response.json()) as Report;
          return response.status === 200 && Date.parse(body.updated_at) > since ? body : undefined;
        },
        { timeoutMs: 60_000 + 3 * PUBLISH_INTERVAL_MS, intervalMs: 250, what: 'a report published after the projection caught up' },
      );
    const first = await report(caughtUp);
    const clickLinks = Math.floor(LINKS / 2);

    // Repeats: links opened again publish nothing, count nothing.
    const repeated = measured.filter((_, i) => i % Math.max(1, Math.floor(LINKS / REPEATS)) === 0).slice(0, REPEATS);
    const r = await openEach(base, repeated);
    await waitForConsumer({ connection: inspector }, Streams.events, Durables.reportingProjection, { timeoutMs: 60_000, intervalMs: 500, what: 'the projection caught up after the repeats' });
    const outcomesRepeated = await outcomes();
    const streamRepeated = await streamMessages();
    const second = await report(Date.now());

    const ratio = g.figures.rps / c.figures.rps;
    const delta = (after: typeof outcomesAfter, before: typeof outcomesBefore) =>
      Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof typeof before]])) as typeof after;
    const firstOutcomes = delta(outcomesAfter, outcomesBefore);
    const repeatOutcomes = delta(outcomesRepeated, outcomesAfter);
    const onceEach =
      g.figures.total === LINKS && g.figures.ok === LINKS && g.figures.setups === LINKS &&
      firstOutcomes.published === LINKS && firstOutcomes.duplicate + firstOutcomes.deferred + firstOutcomes.other === 0 &&
      streamAfter - streamBefore === LINKS;
    const countedOnce = first.exposures === LINKS && first.clicks === clickLinks;
    // A link whose first open went unchecked (Redis too slow: fail open) holds no claim, so its repeat is published again
    // (JetStream drops it inside its duplicate window only); the report must not move either way.
    const repeatsIgnored =
      r.ok === repeated.length && repeatOutcomes.published + repeatOutcomes.duplicate === repeated.length &&
      repeatOutcomes.published <= firstOutcomes.unchecked + repeatOutcomes.unchecked &&
      streamRepeated - streamAfter === repeatOutcomes.published && second.exposures === first.exposures && second.clicks === first.clicks;
    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

    console.log('');
    console.log(
      `GET /track/exposure and /track/click: ${fmt(LINKS)} distinct links (${fmt(LINKS - clickLinks)} exposure, ${fmt(clickLinks)} click), each opened once, ` +
        `${CONNECTIONS} connections${RATE ? ` at ${fmt(RATE)} req/s` : ''}, after ${fmt(WARMUP)} warm-up links; autocannon in the bench process;`,
    );
    console.log(
      `gateway (child processes from dist, LOG_LEVEL=warn, TRACKING_LIMIT_PER_IP_PER_MINUTE=100,000,000${nodeArgs.length ? `, node ${nodeArgs.join(' ')}` : ''}) ` +
        `→ Redis check → JetStream PubAck${PROJECTION_BESIDE ? ', reporting-projection consuming its events beside it' : ', reporting-projection stopped for the rounds (started after them, it drains the backlog)'}; then ${fmt(LINKS)} requests to the ceiling (plain Fastify, one JetStream publish + PubAck, 204):`,
    );
    for (const [i, { gateway: rg, ceiling: rc }] of rounds.entries()) {
      console.log(`  round ${i + 1} gateway: ${describeLoad(rg.figures)}`);
      console.log(`    ${rg.cpu}; ${rg.load}`);
      console.log(`  round ${i + 1} ceiling: ${describeLoad(rc.figures)}`);
      console.log(`    ${rc.cpu}; ${rc.load}`);
    }
    console.log(`  gateway, all rounds: ${describeLoad(g.figures)}`);
    console.log(`  ceiling, all rounds: ${describeLoad(c.figures)}`);
    console.log(
      `  gateway/ceiling: ${ratio.toFixed(2)} of its req/s (target ≥ ${CEILING_RATIO_TARGET}: ${verdict(ratio >= CEILING_RATIO_TARGET)}); ` +
        `p99 ${g.figures.p99} ms (target ≤ ${TARGET_P99_MS} ms: ${verdict(g.figures.p99 <= TARGET_P99_MS)}; ceiling's ${c.figures.p99} ms)`,
    );
    console.log(
      `  published once each: outcomes published ${fmt(firstOutcomes.published)} (of which unchecked, Redis too slow: ${fmt(firstOutcomes.unchecked)}), duplicate ${fmt(firstOutcomes.duplicate)}, deferred ${fmt(firstOutcomes.deferred)}, other ${fmt(firstOutcomes.other)}; ` +
        `EVENTS +${fmt(streamAfter - streamBefore)} messages; ${fmt(g.figures.ok)} answers 204/302 of ${fmt(g.figures.total)} (links handed out ${fmt(g.figures.setups)}): ${verdict(onceEach)}`,
    );
    console.log(
      `  counted once in the report (7d, updated ${first.updated_at}): exposures ${fmt(first.exposures)} (expected ${fmt(LINKS)}), clicks ${fmt(first.clicks)} (expected ${fmt(clickLinks)}): ${verdict(countedOnce)}`,
    );
    console.log(
      `  ${fmt(repeated.length)} links opened again (${describeLoad(r)}): published ${fmt(repeatOutcomes.published)} (at most the unchecked: ${fmt(firstOutcomes.unchecked + repeatOutcomes.unchecked)}), duplicate ${fmt(repeatOutcomes.duplicate)}, ` +
        `EVENTS +${fmt(streamRepeated - streamAfter)}, report exposures ${fmt(second.exposures)}, clicks ${fmt(second.clicks)}: ${verdict(repeatsIgnored)}`,
    );
    console.log(`finished ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    if (!onceEach || !countedOnce || !repeatsIgnored) process.exitCode = 1;
  } finally {
    await inspector.close();
    redisInfo.disconnect();
    for (const child of children.reverse()) await child.stop();
    await deployment?.stop();
    await redis.destroy();
    await nats.stop();
    await db.drop();
  }
}

await main();
