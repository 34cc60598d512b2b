/**
 * Payout read benchmark (issue 4): 50 platforms × 2,000 statements (plus balances and readiness)
 * published as payout events to JetStream and applied by the real payouts-read consumer; then
 * GET /agent-payouts/me/statements?page_size=100 (plain, and with `Accept-Encoding: gzip`) and
 * GET /agent-payouts/me/overview under autocannon through the deployment shape — the gateway
 * and payouts-read as child processes from dist/, a private nats-server, a fresh PostgreSQL
 * database, Redis. Every request carries a valid ID token with role agent (ES256, JWKS loaded
 * by the gateway from a local file through OIDC_JWKS_URL=/path/to/jwks.json); requests rotate
 * over the 50 platforms' tokens. For comparison in the same run, the plain page is also
 * measured through a second gateway without its payout cache (PAYOUTS_CACHE_TTL_MS=0), and
 * the CPU each process spent per request is read from its /metrics. Then the plain page once
 * more while statement updates are published through NATS at WRITES_PER_SECOND (50; as the
 * payout producers would: payouts-read applies them and announces each platform, so the caches
 * are dropped while read), and the gateway's GET /health/live as the ceiling of the same gateway.
 *
 *   npm run bench:payouts                   (DURATION=5 PLATFORMS=5 npm run bench:payouts for a quick run)
 *   CONNECTIONS=50 DURATION=20 PLATFORMS=50 STATEMENTS=2000 COMPARE=1 WRITES_PER_SECOND=50 are the defaults
 *   (COMPARE=0 leaves out the gateway without cache).
 */
import { createRequire } from 'node:module';
import { rm } from 'node:fs/promises';
import { Durables, Streams } from '#libs/contracts';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import { REDIS_URL, connectProducer, freePort, newTestDatabase, startNats, waitFor } from '../test/support/index.js';
import { TEST_AUDIENCE, TEST_ISSUER, generateTestKey, signIdToken, writeJwksFile } from '../test/support/oidc.js';
import { cpuSeconds, describeLoad, metricSum, scrapeMetrics, startChild, waitForHttp, type Child, type LoadFigures } from './harness.js';
import { fmt, machine } from './support.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const SECONDS = Number(process.env.DURATION ?? 20);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const PLATFORMS = Number(process.env.PLATFORMS ?? 50);
const STATEMENTS = Number(process.env.STATEMENTS ?? 2000);
const COMPARE = process.env.COMPARE !== '0';
/** Statement updates per second published during the run "with writes arriving" (issue 15). */
const WRITES_PER_SECOND = Number(process.env.WRITES_PER_SECOND ?? 50);
const TARGET_P99_MS = 30;
const DAY = 86_400_000;
const FIRST_PERIOD = Date.UTC(2021, 0, 1);

const agentOf = (p: number) => `agent_bench_pay_${String(p).padStart(2, '0')}`;
const agentIndex = (agent: string | undefined) => (agent ? Number(agent.slice('agent_bench_pay_'.length)) : 0);

/** Statement n of a platform: one day each from 2021-01-01; mostly PAID with a transfer, the newest LOCKED. */
function statement(agent: string, n: number) {
  const start = FIRST_PERIOD + n * DAY;
  const end = start + DAY;
  const status = n >= STATEMENTS - 3 ? 'LOCKED' : n % 50 === 7 ? 'FAILED' : n % 50 === 13 ? 'BLOCKED' : 'PAID';
  const iso = (t: number) => new Date(t).toISOString();
  return {
    statement_id: `st_${agent}_${String(n).padStart(5, '0')}`,
    agent_id: agent,
    period_start: iso(start),
    period_end: iso(end),
    currency: 'USD',
    status,
    gross_earnings_micros: 100_000_000 + n * 1_000,
    service_fee_micros: 10_000_000,
    net_earnings_micros: 90_000_000 + n * 1_000,
    blocked_reason: status === 'BLOCKED' ? 'The tax form is missing.' : null,
    failure: status === 'FAILED' ? { code: 'account_closed', message: 'The beneficiary account is closed.' } : null,
    transfer:
      status === 'PAID'
        ? {
            transfer_reference: `tr_${agent}_${n}`,
            status: 'settled',
            initiated_at: iso(end + 3_600_000),
            settled_at: iso(end + 2 * DAY),
            source_currency: 'USD',
            source_amount_micros: 90_000_000 + n * 1_000,
            target_currency: n % 3 === 0 ? 'EUR' : 'USD',
            amount_received_micros: n % 3 === 0 ? 83_000_000 : 89_500_000,
            fee_micros: 500_000,
            exchange_rate: n % 3 === 0 ? '0.9277' : null,
          }
        : null,
    created_at: iso(end + 600_000),
    updated_at: iso(end + 2 * DAY),
    version: 1,
  };
}

function* events(): Generator<{ subject: string; id: string; payload: unknown }> {
  const now = new Date().toISOString();
  for (let p = 0; p < PLATFORMS; p++) {
    const agent = agentOf(p);
    for (const [i, currency] of ['EUR', 'USD'].entries()) {
      yield {
        subject: 'events.payouts.balance',
        id: `bal_${agent}_${currency}`,
        payload: { agent_id: agent, currency, pending_micros: 1_000_000 * (p + 1), available_micros: 2_000_000 * (i + 1), locked_micros: 270_000_000, paid_out_micros: 90_000_000 * STATEMENTS, updated_at: now, version: 1 },
      };
    }
    yield {
      subject: 'events.payouts.readiness',
      id: `rdy_${agent}`,
      payload: { agent_id: agent, setup_status: 'complete', missing_fields: [], thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }], blocked_reason: null, updated_at: now, version: 1 },
    };
  }
  // Interleaved between platforms, as producers would publish them.
  for (let n = 0; n < STATEMENTS; n++) {
    for (let p = 0; p < PLATFORMS; p++) {
      const payload = statement(agentOf(p), n);
      yield { subject: 'events.payouts.statement', id: `${payload.statement_id}_v1`, payload };
    }
  }
}

async function publish(url: string): Promise<number> {
  const producer = await connectProducer(url);
  let count = 0;
  let inFlight: Promise<unknown>[] = [];
  for (const event of events()) {
    inFlight.push(producer.publishRaw(event.subject, JSON.stringify(event.payload), event.id));
    count++;
    if (inFlight.length >= 1000) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  await producer.close();
  return count;
}

/**
 * Publishes statement updates at WRITES_PER_SECOND through NATS as the payout producers would
 * (the newest statement of each platform in turn, a higher version and a new updated_at each
 * time), until stopped; payouts-read applies them and announces the platforms, so the gateway's
 * and payouts-read's caches are dropped while the pages are read. Each publish awaits its PubAck.
 */
function startWriter(url: string): { stop(): Promise<{ published: number; failed: number; last: { agent: string; updatedAt: string } | undefined }> } {
  let sent = 0;
  let published = 0;
  let failed = 0;
  let last: { agent: string; updatedAt: string } | undefined;
  const inFlight = new Set<Promise<unknown>>();
  const producerReady = connectProducer(url);
  const started = Date.now();
  let version = 1;
  const timer = setInterval(() => {
    void producerReady.then((producer) => {
      // Catch up with the schedule (timers are coarse under load): one event per 1/WRITES_PER_SECOND s since the start.
      const due = Math.floor(((Date.now() - started) / 1000) * WRITES_PER_SECOND);
      while (sent < due) {
        const n = sent++;
        const agent = agentOf(n % PLATFORMS);
        if (n % PLATFORMS === 0) version++;
        const payload = { ...statement(agent, STATEMENTS - 1), updated_at: new Date().toISOString(), version };
        const publish = producer.publishRaw('events.payouts.statement', JSON.stringify(payload), `${payload.statement_id}_v${version}`).then(
          () => {
            published++;
            last = { agent, updatedAt: payload.updated_at };
          },
          () => failed++,
        );
        inFlight.add(publish);
        void publish.finally(() => inFlight.delete(publish));
      }
    });
  }, 10);
  return {
    stop: async () => {
      clearInterval(timer);
      const producer = await producerReady;
      await Promise.all(inFlight);
      await producer.close();
      return { published, failed, last };
    },
  };
}

// autocannon ships no types; the part of its API used here (requests rotating the tokens).
interface AutocannonRequest {
  method: string;
  path: string;
  setupRequest: (request: { headers?: Record<string, string> }) => { headers?: Record<string, string> };
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { average: number; p50: number; p90: number; p99: number; max: number };
  throughput: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (options: { url: string; connections: number; duration: number; timeout: number; requests: AutocannonRequest[] }) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface RunFigures extends LoadFigures {
  /** Response bytes per second autocannon received (headers and bodies). */
  bytesPerSecond: number;
}

/** One autocannon run over `path`, each request with the next platform's ID token (and `headers`). */
async function loadWithTokens(base: string, path: string, tokens: string[], seconds: number, headers: Record<string, string> = {}): Promise<RunFigures> {
  let next = 0;
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: 'GET',
        path,
        setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }),
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.average,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).filter(([status]) => !status.startsWith('2')).map(([status, { count }]) => [status, count])),
    bytesPerSecond: result.throughput.average,
  };
}

function verdict(f: LoadFigures): string {
  const p99 = f.p99 <= TARGET_P99_MS ? 'met' : 'NOT met';
  const non2xx = f.non2xx === 0 && f.errors === 0 && f.timeouts === 0 ? 'met' : 'NOT met';
  return `targets: p99 ≤ ${TARGET_P99_MS} ms ${p99}; non-2xx = 0 ${non2xx}`;
}

async function main() {
  console.log(`machine: ${machine()}`);
  const nats = await startNats();
  const db = newTestDatabase();
  const key = await generateTestKey('ES256');
  const jwksPath = await writeJwksFile([key]);
  const children: Child[] = [];
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
    const payoutsPort = await freePort();
    const payouts = startChild('payouts-read', 'dist/apps/payouts-read/src/main.js', { ...common, PAYOUTS_HTTP_PORT: payoutsPort });
    children.push(payouts);
    await waitForHttp(`http://127.0.0.1:${payoutsPort}/health/ready`, { child: payouts });
    const gatewayPort = await freePort();
    const gatewayEnv = {
      ...common,
      TRACKING_SIGNING_SECRET: 'bench-payouts-tracking-signing-secret',
      OIDC_ISSUER: TEST_ISSUER,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      OIDC_JWKS_URL: jwksPath,
    };
    // GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the (cached) gateway.
    const nodeArgs = process.env.GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const gateway = startChild('gateway', 'dist/apps/gateway/src/main.js', { ...gatewayEnv, PORT: gatewayPort }, [], nodeArgs);
    children.push(gateway);
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/health/ready`, { child: gateway });

    // The platforms and their owners (the gateway has migrated the identity schema by now).
    const identityDb = createIdentityDataSource(db.url, 2, 'bench-payouts');
    await identityDb.initialize();
    const identity = new IdentityRepository(identityDb);
    const tokens: string[] = [];
    for (let p = 0; p < PLATFORMS; p++) {
      await identity.createPlatform(agentOf(p), `uid_${agentOf(p)}`);
      tokens.push(await signIdToken(key, { sub: `uid_${agentOf(p)}`, role: 'agent', exp: Math.floor(Date.now() / 1000) + 6 * 3600 }));
    }
    await identityDb.destroy();

    const publishStarted = Date.now();
    const published = await publish(nats.url);
    const publishMs = Date.now() - publishStarted;
    const inspector = await NatsClient.connect({ servers: [nats.url], name: 'bench-inspector' });
    await waitFor(
      async () => {
        const info = await inspector.manager.consumers.info(Streams.events, Durables.payoutsRead);
        return info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq >= published;
      },
      { timeoutMs: 600_000, intervalMs: 200, what: 'payouts-read caught up' },
    );
    await inspector.drain();
    const appliedMs = Date.now() - publishStarted;

    const base = `http://127.0.0.1:${gatewayPort}`;
    const statementsPath = '/agent-payouts/me/statements?page_size=100';
    const overviewPath = '/agent-payouts/me/overview';
    // The read model is the real one: check what a platform sees before measuring.
    const check = async (path: string, token: string) => {
      // fetch asks for gzip unless told otherwise: the plain bytes here.
      const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' } });
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
      return { body: (await response.json()) as Record<string, unknown>, bytes: Number(response.headers.get('content-length') ?? 0) };
    };
    const page = await check(statementsPath, tokens[PLATFORMS - 1]);
    const overview = await check(overviewPath, tokens[0]);
    const items = page.body.items as { agent_id: string }[];
    if (page.body.total !== STATEMENTS || items.length !== Math.min(100, STATEMENTS) || items.some((s) => s.agent_id !== agentOf(PLATFORMS - 1))) {
      throw new Error(`unexpected statements page: total ${String(page.body.total)}, ${items.length} items`);
    }
    console.log(
      `published ${fmt(published)} payout events (${PLATFORMS} platforms × ${fmt(STATEMENTS)} statements, 2 balances and 1 readiness each) in ${(publishMs / 1000).toFixed(1)} s; ` +
        `applied by payouts-read ${(appliedMs / 1000).toFixed(1)} s after the first publish (${fmt(published / (appliedMs / 1000))} events/s end to end)`,
    );
    console.log(
      `statements page: total ${String(page.body.total)}, ${items.length} items, ${fmt(page.bytes)} bytes; overview: ${(overview.body.recent_statements as unknown[]).length} recent statements, ${fmt(overview.bytes)} bytes`,
    );

    const gzipPage = await fetch(`${base}${statementsPath}`, { headers: { authorization: `Bearer ${tokens[0]}`, 'accept-encoding': 'gzip' } });
    await gzipPage.arrayBuffer();
    const gzipBytes = Number(gzipPage.headers.get('content-length') ?? 0);
    console.log(`statements page with Accept-Encoding: gzip: ${fmt(gzipBytes)} bytes (${gzipPage.headers.get('content-encoding') ?? 'not compressed'})`);

    // Every run: a warm-up, then the measured run; CPU seconds of both services around it.
    const metrics = { gateway: `${base}/metrics`, payoutsRead: `http://127.0.0.1:${payoutsPort}/metrics` };
    const measure = async (name: string, target: string, path: string, headers: Record<string, string> = {}, gatewayMetrics = metrics.gateway) => {
      await loadWithTokens(target, path, tokens, WARMUP_SECONDS, headers);
      const before = { gateway: await cpuSeconds(gatewayMetrics), payoutsRead: await cpuSeconds(metrics.payoutsRead) };
      const figures = await loadWithTokens(target, path, tokens, SECONDS, headers);
      const after = { gateway: await cpuSeconds(gatewayMetrics), payoutsRead: await cpuSeconds(metrics.payoutsRead) };
      const perRequest = (seconds: number) => `${fmt((seconds * 1e6) / Math.max(1, figures.total))} µs`;
      return {
        name,
        figures,
        cpu: `CPU per request: gateway ${perRequest(after.gateway - before.gateway)}, payouts-read ${perRequest(after.payoutsRead - before.payoutsRead)}; ${(figures.bytesPerSecond / 1e6).toFixed(1)} MB/s received`,
      };
    };
    const results = [
      await measure(`GET ${statementsPath}`, base, statementsPath),
      await measure(`GET ${statementsPath} with Accept-Encoding: gzip`, base, statementsPath, { 'accept-encoding': 'gzip' }),
      await measure(`GET ${overviewPath}`, base, overviewPath),
    ];

    // The plain page again while statements are updated at WRITES_PER_SECOND: each update drops its platform's cached replies (gateway and payouts-read).
    const cacheBefore = await scrapeMetrics(metrics.gateway);
    const writer = startWriter(nats.url);
    const underWrites = await measure(`GET ${statementsPath} with writes arriving (${WRITES_PER_SECOND} statement updates/s)`, base, statementsPath);
    const written = await writer.stop();
    const cacheAfter = await scrapeMetrics(metrics.gateway);
    const delta = (name: string, labels: Record<string, string>) => (metricSum(cacheAfter, name, labels) || 0) - (metricSum(cacheBefore, name, labels) || 0);
    const misses = delta('weave_gateway_payout_cache_total', { outcome: 'miss' });
    const hits = delta('weave_gateway_payout_cache_total', { outcome: 'hit' });
    // Every update is applied and visible: the last one shows in its platform's first page.
    const updatesApplied = await waitFor(
      async () => {
        const { body } = await check(statementsPath, tokens[agentIndex(written.last?.agent)]);
        const newest = (body.items as { statement_id: string; updated_at: string }[])[0];
        return newest.updated_at === written.last?.updatedAt ? newest : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the last statement update to be visible' },
    );
    underWrites.cpu +=
      `\n  writes: ${fmt(written.published)} statement updates published (${written.failed} failed) over the run and its warm-up; gateway payout cache ${fmt(hits)} hits, ${fmt(misses)} misses` +
      ` (${((100 * misses) / Math.max(1, hits + misses)).toFixed(1)} % asked payouts-read); the last update (${updatesApplied.statement_id}, updated_at ${updatesApplied.updated_at}) is in its platform's first page`;
    results.push(underWrites);

    // Ceiling: the same gateway's GET /health/live (no authentication, no I/O), same connections and tokens.
    results.push(await measure('ceiling: GET /health/live of the same gateway (no authentication, no I/O)', base, '/health/live'));
    if (COMPARE) {
      // The same gateway without its payout cache: every request goes to payouts-read (which keeps its own cache).
      const plainPort = await freePort();
      const plainGateway = startChild('gateway-without-cache', 'dist/apps/gateway/src/main.js', { ...gatewayEnv, PORT: plainPort, PAYOUTS_CACHE_TTL_MS: 0 });
      children.push(plainGateway);
      await waitForHttp(`http://127.0.0.1:${plainPort}/health/ready`, { child: plainGateway });
      const plainBase = `http://127.0.0.1:${plainPort}`;
      await gateway.stop();
      results.push(await measure(`GET ${statementsPath}, gateway without its payout cache (PAYOUTS_CACHE_TTL_MS=0)`, plainBase, statementsPath, {}, `${plainBase}/metrics`));
    }

    console.log('');
    console.log(
      `${CONNECTIONS} connections, ${SECONDS} s each (after ${WARMUP_SECONDS} s warm-up), autocannon in the bench process, requests rotating over ${PLATFORMS} platforms' ID tokens;`,
    );
    console.log('gateway (ID token ES256 + platform lookup, payout cache) → NATS → payouts-read (child processes from dist, LOG_LEVEL=warn):');
    for (const { name, figures, cpu } of results) {
      console.log(name);
      console.log(`  ${describeLoad(figures)}`);
      console.log(`  ${cpu}`);
      if (!name.startsWith('ceiling')) console.log(`  ${verdict(figures)}`);
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
    await nats.stop();
    await db.drop();
    await rm(jwksPath, { force: true });
  }
}

await main();
