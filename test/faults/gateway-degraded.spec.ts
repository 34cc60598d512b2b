import {
  startNats,
  startPrivatePostgres,
  startPrivateRedis,
  waitFor,
  whenStopped,
  type PrivatePostgres,
  type PrivateRedis,
  type TestNats,
} from '../support/index.js';
import { waitCaughtUp } from './support/consumer.js';
import { report } from './support/figures.js';
import { compareWithModel } from './support/model-comparison.js';
import { connectFaultProducer, type Producer, type PublishResult } from './support/producer.js';
import { metricValue, ops, startService, type ServiceProcess } from './support/services.js';
import { buildWorkload } from './support/workload.js';

/**
 * Faults 5 and 6, over real HTTP against the gateway and reporting-projection as child
 * processes, with keys made by the ops CLI.
 * (5) Redis disappears: reports and API-key checks keep answering (Redis is a cache and the
 *     rate limiter fails open), the gateway says so in its log and its readiness, and when
 *     Redis returns the limiter uses it again.
 * (6) reporting-projection is killed: GET /agent/reporting answers 503 quickly (no hanging
 *     request), and 200 again once it is back.
 */
const AGENT = 'agent_gw1';
const REPORTING_TIMEOUT_MS = 2000;

let postgres: PrivatePostgres;
let nats: TestNats;
let redis: PrivateRedis;
let producer: Producer;
let reporting: ServiceProcess;
let gateway: ServiceProcess;
let published: PublishResult;
let key: string;
let env: { NATS_URL: string; DATABASE_URL: string; REDIS_URL: string };

const get = (apiKey: string, query = '?time_range=all') => fetch(`${gateway.url}/agent/reporting${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
const startReporting = () => startService('reporting-projection', { ...env, REPORTING_PUBLISH_INTERVAL_MS: 1000 }, { label: 'reporting' });
const unknownKey = `sk_live_${'A1b2C3d4'.repeat(4)}`;

beforeAll(async () => {
  [postgres, nats, redis] = await Promise.all([startPrivatePostgres(), startNats(), startPrivateRedis()]);
  env = { NATS_URL: nats.url, DATABASE_URL: postgres.url('weave'), REDIS_URL: redis.url };
  producer = await connectFaultProducer(nats.url);
  reporting = await startReporting();
  gateway = await startService('gateway', { ...env, REPORTING_REQUEST_TIMEOUT_MS: REPORTING_TIMEOUT_MS }, { ready: 'ready' });
  await ops(['platform', 'create', '--agent-id', AGENT], env);
  key = String((await ops(['key', 'create', '--agent-id', AGENT, '--mode', 'live'], env)).api_key);

  published = await producer.publish(buildWorkload({ seed: 7005, targetEvents: 2000, agents: [AGENT] }));
  const caughtUp = await waitCaughtUp(producer.manager);
  const first = await get(key);
  expect(first.status).toBe(202);
  await waitFor(async () => {
    const response = await get(key);
    return response.status === 200 && Date.parse(((await response.json()) as { updated_at: string }).updated_at) >= caughtUp.getTime();
  }, { timeoutMs: 30000, what: 'a report published after the events were applied' });
}, 180_000);

afterAll(async () => {
  await gateway?.kill();
  await reporting?.kill();
  await producer?.close();
  await Promise.all([nats?.stop(), redis?.destroy(), postgres?.destroy()]);
});

describe('fault: Redis unavailable', () => {
  it('reports and API-key checks keep answering (degraded, logged) and the limiter uses Redis again when it returns', async () => {
    // Before: the limiter counts in Redis and says so in its headers.
    expect((await get(key)).headers.get('ratelimit-remaining')).not.toBeNull();
    const failOpenBefore = metricValue(await gateway.metrics(), 'weave_rate_limit_fail_open_total');
    await redis.stop('SIGKILL');

    // Readiness tells the orchestrator (DESIGN §5: ready only when Redis answers) ...
    await waitFor(async () => (await fetch(`${gateway.url}/health/ready`)).status === 503, { timeoutMs: 15000, what: 'gateway readiness to report Redis down' });

    // A lease of tokens taken before the outage is served locally for at most a second (with its
    // RateLimit headers); let it lapse so that every request below finds Redis gone.
    await new Promise((resolve) => setTimeout(resolve, 1100));

    // ... but requests are served: the report, an unknown key refused, a key made now accepted, a revoked one refused.
    const statuses: number[] = [];
    let body: Record<string, unknown> = {};
    let headersWhileDown = 0;
    for (let i = 0; i < 20; i++) {
      const response = await get(key);
      statuses.push(response.status);
      if (response.headers.get('ratelimit-remaining') !== null) headersWhileDown++;
      body = (await response.json()) as Record<string, unknown>;
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    const comparison = compareWithModel([body as never], published.acked);
    expect(comparison.mismatches).toEqual([]);
    expect((await get(unknownKey)).status).toBe(401);
    const created = await ops(['key', 'create', '--agent-id', AGENT, '--mode', 'live'], env);
    expect((await get(String(created.api_key))).status).toBe(200);
    await ops(['key', 'revoke', '--key-id', String(created.key_id)], env);
    await waitFor(async () => (await get(String(created.api_key))).status === 401, { timeoutMs: 5000, what: 'the revoked key to be refused' });

    const failOpenDuring = metricValue(await gateway.metrics(), 'weave_rate_limit_fail_open_total');
    const log = gateway.output();
    expect(log).toMatch(/Redis unavailable/);
    expect(failOpenDuring).toBeGreaterThan(failOpenBefore);
    expect(headersWhileDown).toBe(0);

    // Redis returns (empty): the gateway is ready again and the limiter consults Redis again
    // (its RateLimit-* headers come back, nothing more is let through unchecked).
    await redis.start();
    await waitFor(async () => (await fetch(`${gateway.url}/health/ready`)).status === 200, { timeoutMs: 15000, what: 'gateway ready again' });
    const limited = await waitFor(
      async () => {
        const response = await get(key);
        expect(response.status).toBe(200);
        return response.headers.get('ratelimit-remaining') !== null ? response : undefined;
      },
      { timeoutMs: 15000, intervalMs: 200, what: 'the rate limiter to consult Redis again' },
    );
    const failOpenSettled = metricValue(await gateway.metrics(), 'weave_rate_limit_fail_open_total');
    for (let i = 0; i < 10; i++) expect((await get(key)).status).toBe(200);
    const failOpenAfter = metricValue(await gateway.metrics(), 'weave_rate_limit_fail_open_total');
    report('Redis unavailable', {
      statusesWhileDown: [...new Set(statuses)],
      rateLimitHeadersWhileDown: headersWhileDown,
      failOpenWhileDown: failOpenDuring - failOpenBefore,
      rateLimitLimitAfterRecovery: limited.headers.get('ratelimit-limit'),
      failOpenAfterRecovery: failOpenAfter - failOpenSettled,
    });
    expect(failOpenAfter).toBe(failOpenSettled);
    expect(gateway.running()).toBe(true);
  }, 120_000);
});

describe('fault: reporting-projection down', () => {
  it('hung (SIGSTOP): GET /agent/reporting answers 503 after the request timeout, never hangs', async () => {
    process.kill(reporting.pid, 'SIGSTOP');
    await whenStopped(reporting.pid);
    try {
      const started = Date.now();
      const response = await get(key);
      const elapsedMs = Date.now() - started;
      report('reporting-projection hung', { status: response.status, answeredAfterMs: elapsedMs, timeoutMs: REPORTING_TIMEOUT_MS });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toMatchObject({ status: 503, type: expect.stringMatching(/reporting-unavailable$/) });
      expect(elapsedMs).toBeLessThan(REPORTING_TIMEOUT_MS + 5000);
    } finally {
      process.kill(reporting.pid, 'SIGCONT');
    }
    await waitFor(async () => (await get(key)).status === 200, { timeoutMs: 15000, what: '200 once reporting-projection runs again' });
  }, 60_000);

  it('dead (SIGKILL): GET /agent/reporting answers 503 quickly, then 200 again after a restart', async () => {
    await reporting.kill('SIGKILL');
    const started = Date.now();
    const response = await get(key);
    const elapsedMs = Date.now() - started;
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toMatchObject({ status: 503, type: expect.stringMatching(/reporting-unavailable$/) });
    expect(elapsedMs).toBeLessThan(REPORTING_TIMEOUT_MS + 5000);
    // Key checks do not depend on reporting.
    expect((await get(unknownKey)).status).toBe(401);

    const restartedAt = Date.now();
    reporting = await startReporting();
    const body = await waitFor(async () => {
      const again = await get(key);
      return again.status === 200 ? ((await again.json()) as Record<string, unknown>) : undefined;
    }, { timeoutMs: 30000, intervalMs: 100, what: '200 after reporting-projection is back' });
    report('reporting-projection down', { firstAnswerMs: elapsedMs, status: response.status, backToOkAfterRestartMs: Date.now() - restartedAt });
    expect(compareWithModel([body as never], published.acked).mismatches).toEqual([]);
  }, 120_000);
});
