import { connect, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { BroadcastSubjects, REQUEST_ID_HEADER, RpcSubjects, type Report, type RpcReply } from '#libs/contracts';
import { encodeIdentityChanged, generateApiKey, type IdentityRepository } from '#libs/identity';
import { readyReport, seedPlatform, startGateway, useTestStack, waitFor } from '../support/index.js';

/**
 * The gateway over real HTTP, with this file's private nats-server and database and the
 * machine's Redis. Platforms and keys are written through IdentityRepository (what the ops CLI
 * uses) and announced on identity.v1.changed like the CLI does; a test "reporting service"
 * answers reporting.v1.report.get on the real bus where a test needs an answer.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const PROBLEM = 'application/problem+json';
const ID_TOKEN =
  'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwic3ViIjoidTEiLCJyb2xlIjoiYWdlbnQifQ.c2lnbmF0dXJl';

interface Observed {
  payload: { agent_id: string; traffic: string; time_range: string };
  requestId: string | undefined;
}

const stack = useTestStack();
let base: string;
let bus: NatsConnection;
let identity: IdentityRepository;
let liveKey: string;
let testKey: string;
let responder: Subscription | undefined;

const report = (agentId: string, timeRange: string, isTest: boolean): Report => readyReport(agentId, timeRange, { is_test: isTest, exposures: 3, clicks: 1 });

/** Serves reporting.v1.report.get on the test bus with `answer`, recording what arrives. */
/** Subscribes and waits until the server has the subscription, so the next request finds it. */
async function serveReports(answer: (payload: Observed['payload']) => RpcReply<unknown>): Promise<Observed[]> {
  responder?.unsubscribe();
  const seen: Observed[] = [];
  responder = bus.subscribe(RpcSubjects.reportGet, {
    callback: (_err, msg: Msg) => {
      const payload = JSON.parse(decoder.decode(msg.data)) as Observed['payload'];
      seen.push({ payload, requestId: msg.headers?.get(REQUEST_ID_HEADER) });
      msg.respond(encoder.encode(JSON.stringify(answer(payload))));
    },
  });
  await bus.flush();
  return seen;
}

async function stopServingReports(): Promise<void> {
  responder?.unsubscribe();
  responder = undefined;
  await bus.flush();
}

async function get(path: string, authorization?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${path}`, { headers: { ...(authorization !== undefined ? { authorization } : {}), ...headers } });
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

async function expectProblem(response: Response, status: number): Promise<Problem> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe(PROBLEM);
  expect(response.headers.get('x-request-id')).toBeTruthy();
  const body = (await response.json()) as Problem;
  expect(Object.keys(body).sort()).toEqual(['detail', 'status', 'title', 'type']);
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.type === 'about:blank' || body.type.startsWith('https://docs.weave.example/problems/')).toBe(true);
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.(js|ts):\d+/);
  return body;
}

async function announce(change: { agent_id?: string; key_id?: string }): Promise<void> {
  bus.publish(BroadcastSubjects.identityChanged, encodeIdentityChanged(change));
  await bus.flush();
}

beforeAll(async () => {
  ({ base } = await startGateway(stack, {
    oidc: false,
    extra: { PORT: '0', HTTP_BODY_LIMIT: '2048', REPORTING_REQUEST_TIMEOUT_MS: '1500', LOG_LEVEL: 'warn' },
  }));
  bus = await connect({ servers: stack.nats.url });
  stack.atEnd(async () => {
    responder?.unsubscribe();
    await bus.close();
  });
  // The gateway ran the identity migrations at start; the test writes through the same repository as the CLI.
  let keys: Record<'live' | 'test', string>;
  ({ identity, keys } = await seedPlatform(stack, 'agent_e2e', { owner: 'owner_1', keys: ['live', 'test'] }));
  ({ live: liveKey, test: testKey } = keys);
});

describe('authentication (401)', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a non-Bearer scheme', `Basic ${Buffer.from('agent:secret').toString('base64')}`],
    ['the key without a scheme', 'sk_live_' + 'a'.repeat(40)],
    ['an empty Bearer credential', 'Bearer '],
    ['a malformed key', 'Bearer sk_live_nope'],
    ['an unknown well-formed key', `Bearer ${generateApiKey('live')}`],
  ])('answers 401 problem+json with WWW-Authenticate for %s', async (_case, authorization) => {
    const response = await get('/agent/reporting', authorization);
    const body = await expectProblem(response, 401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(body.type).toBe('https://docs.weave.example/problems/invalid-api-key');
    if (authorization) expect(JSON.stringify(body)).not.toContain(authorization.replace(/^\S+ /, '') || '\u0000');
  });

  it('refuses an ID token with a hint to use the API key', async () => {
    const response = await get('/agent/reporting', `Bearer ${ID_TOKEN}`);
    const body = await expectProblem(response, 401);
    expect(body.detail).toMatch(/ID token is not accepted here; use the platform API key/);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('refuses a revoked key', async () => {
    await identity.createPlatform('agent_revoked');
    const key = await identity.createKey('agent_revoked', 'live');
    await identity.revokeKey(key.key_id);
    await expectProblem(await get('/agent/reporting', `Bearer ${key.api_key}`), 401);
  });

  it('answers 401 before 422', async () => {
    await expectProblem(await get('/agent/reporting?time_range=forever&x=1'), 401);
    await expectProblem(await get('/agent/reporting?time_range=forever', 'Bearer sk_live_bad'), 401);
  });
});

describe('account (403)', () => {
  it('refuses a suspended platform, also before 422, and lets it through after activation', async () => {
    await identity.createPlatform('agent_suspend');
    const { api_key } = await identity.createKey('agent_suspend', 'live');
    await identity.setStatus('agent_suspend', 'suspended');
    await announce({ agent_id: 'agent_suspend' });

    const body = await expectProblem(await get('/agent/reporting', `Bearer ${api_key}`), 403);
    expect(body.type).toBe('https://docs.weave.example/problems/account-unavailable');
    await expectProblem(await get('/agent/reporting?time_range=bogus', `Bearer ${api_key}`), 403);

    await identity.setStatus('agent_suspend', 'active');
    await announce({ agent_id: 'agent_suspend' });
    // No reporting service runs here: getting past authentication means 503, as in production.
    const response = await get('/agent/reporting', `Bearer ${api_key}`);
    await expectProblem(response, 503);
    expect(response.headers.get('retry-after')).toBe('5');
  });
});

describe('query validation (422)', () => {
  it.each([
    '?time_range=1y',
    '?time_range=',
    '?time_range',
    '?time_range=7d&time_range=7d',
    '?time_range=7d&foo=bar',
    '?agent_id=other',
    '?traffic=test',
    '?TIME_RANGE=7d',
    '?time_range=%ZZ',
  ])('answers 422 for %s', async (query) => {
    const body = await expectProblem(await get(`/agent/reporting${query}`, `Bearer ${liveKey}`), 422);
    expect(body.type).toBe('https://docs.weave.example/problems/invalid-query');
  });
});

describe('reporting over NATS', () => {
  afterEach(stopServingReports);

  it('answers 503 with Retry-After when no reporting service answers', async () => {
    const response = await get('/agent/reporting?time_range=7d', `Bearer ${liveKey}`);
    const body = await expectProblem(response, 503);
    expect(body.type).toBe('https://docs.weave.example/problems/reporting-unavailable');
    expect(response.headers.get('retry-after')).toBe('5');
  });

  it('sends traffic from the key mode, the time range (default 30d) and the request id', async () => {
    const seen = await serveReports((p) => ({ ok: true, result: report(p.agent_id, p.time_range, p.traffic === 'test') }));

    const live = await get('/agent/reporting', `Bearer ${liveKey}`, { 'x-request-id': 'req-live-1' });
    expect(live.status).toBe(200);
    expect(live.headers.get('x-request-id')).toBe('req-live-1');
    expect(live.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await live.json()).toEqual(report('agent_e2e', '30d', false));

    const test = await get('/agent/reporting?time_range=today', `Bearer ${testKey}`);
    expect(test.status).toBe(200);
    expect(((await test.json()) as Report).is_test).toBe(true);

    expect(seen).toEqual([
      { payload: { agent_id: 'agent_e2e', traffic: 'live', time_range: '30d' }, requestId: 'req-live-1' },
      { payload: { agent_id: 'agent_e2e', traffic: 'test', time_range: 'today' }, requestId: test.headers.get('x-request-id') },
    ]);
  });

  it('answers 202 with Retry-After: 60 while the report is prepared', async () => {
    await serveReports((p) => ({
      ok: true,
      result: { status: 'preparing', agent_id: p.agent_id, time_range: p.time_range, is_test: false, report_schema_version: 1 },
    }));
    const response = await get('/agent/reporting?time_range=90d', `Bearer ${liveKey}`);
    expect(response.status).toBe(202);
    expect(response.headers.get('retry-after')).toBe('60');
    expect(await response.json()).toEqual({ status: 'preparing', agent_id: 'agent_e2e', time_range: '90d', is_test: false, report_schema_version: 1 });
  });

  it.each([
    ['unavailable', 503],
    ['internal', 503],
    ['invalid_request', 422],
  ] as const)('maps an error reply %s to %i', async (code, status) => {
    await serveReports(() => ({ ok: false, error: { code, message: 'from reporting' } }));
    const response = await get('/agent/reporting', `Bearer ${liveKey}`);
    await expectProblem(response, status);
    if (status === 503) expect(response.headers.get('retry-after')).toBe('5');
  });

  it('answers an unexpected failure with a generic 500 problem', async () => {
    await serveReports(() => ({ ok: false, error: { code: 'not_found', message: 'secret internals' } }));
    const body = await expectProblem(await get('/agent/reporting', `Bearer ${liveKey}`), 500);
    expect(body.detail).not.toContain('secret internals');
  });
});

describe('revocation and suspension reach the gateway within 1 s', () => {
  beforeAll(() => serveReports((p) => ({ ok: true, result: report(p.agent_id, p.time_range, false) })));
  afterAll(stopServingReports);

  async function measure(apiKey: string, expected: number, change: () => Promise<void>): Promise<number> {
    // Warm the cache: the key is accepted.
    expect((await get('/agent/reporting', `Bearer ${apiKey}`)).status).toBe(200);
    expect((await get('/agent/reporting', `Bearer ${apiKey}`)).status).toBe(200);
    const started = Date.now();
    await change();
    await waitFor(async () => (await get('/agent/reporting', `Bearer ${apiKey}`)).status === expected, {
      timeoutMs: 3000,
      intervalMs: 10,
      what: `status ${expected}`,
    });
    return Date.now() - started;
  }

  it('revoke with the broadcast', async () => {
    const key = await identity.createKey('agent_e2e', 'live');
    const elapsed = await measure(key.api_key, 401, async () => {
      await identity.revokeKey(key.key_id);
      await announce({ agent_id: 'agent_e2e', key_id: key.key_id });
    });
    expect(elapsed).toBeLessThan(1000);
  });

  it('revoke without any broadcast (identity version poll bound; the cache TTL is 60 s)', async () => {
    const key = await identity.createKey('agent_e2e', 'live');
    const elapsed = await measure(key.api_key, 401, () => identity.revokeKey(key.key_id).then(() => undefined));
    expect(elapsed).toBeLessThan(1000);
  });

  it('suspension without any broadcast (identity version poll bound)', async () => {
    await identity.createPlatform('agent_suspend_ttl');
    const key = await identity.createKey('agent_suspend_ttl', 'live');
    const elapsed = await measure(key.api_key, 403, () => identity.setStatus('agent_suspend_ttl', 'suspended').then(() => undefined));
    expect(elapsed).toBeLessThan(1000);
  });
});

describe('problem details for framework errors, request ids, metrics', () => {
  it('answers an unknown route with a 404 problem', async () => {
    const body = await expectProblem(await get('/nope/nothing'), 404);
    expect(body.type).toBe('https://docs.weave.example/problems/not-found');
  });

  it('answers a body over the limit with a 413 problem', async () => {
    const response = await fetch(`${base}/agent/reporting`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ padding: 'x'.repeat(10000) }),
    });
    await expectProblem(response, 413);
  });

  it('echoes a caller request id and replaces an unsafe one', async () => {
    expect((await get('/health/live', undefined, { 'x-request-id': 'abc-123' })).headers.get('x-request-id')).toBe('abc-123');
    const replaced = (await get('/health/live', undefined, { 'x-request-id': 'x'.repeat(300) })).headers.get('x-request-id');
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('exports the HTTP histogram labelled by route pattern', async () => {
    const text = await (await get('/metrics')).text();
    expect(text).toMatch(/weave_http_request_duration_seconds_count\{[^}]*method="GET"[^}]*route="\/agent\/reporting"[^}]*status="401"[^}]*\}/);
    expect(text).not.toMatch(/route="\/agent\/reporting\?/);
    expect(text).toMatch(/route="unmatched"[^}]*status="404"/);
  });

  it('is ready when NATS, PostgreSQL and Redis answer', async () => {
    expect((await get('/health/ready')).status).toBe(200);
  });
});
