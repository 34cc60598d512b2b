import { Durables, Streams, type PayoutStatement } from '#libs/contracts';
import type { PayoutsReadEnv } from '../../apps/payouts-read/src/config/payouts-read.env.js';
import {
  PAYOUT_STATUSES,
  connectStackProducer,
  expectProblem,
  identityOf,
  payoutBalanceEvent,
  payoutStatementEvent,
  seedPlatform,
  startGateway,
  startIdentityProvider,
  startPayoutsRead,
  useTestStack,
  waitForConsumer,
  type Producer,
  type ServiceUnderTest,
} from '../support/index.js';
import { signIdToken, type TestKey } from '../support/oidc.js';

/**
 * GET /agent-payouts/me/* end to end over real HTTP: the gateway (ID token with role agent from
 * a real JWKS server) → NATS request/reply → the real payouts-read and its read model, filled
 * from payout events published to JetStream. Two platforms with data, one without.
 */

const stack = useTestStack();
let payouts: ServiceUnderTest<PayoutsReadEnv> | undefined;
let base: string;
let producer: Producer;
let key: TestKey;
let apiKey: string;
const tokens: Record<string, string> = {};

const A = 'agent_pay_a';
const B = 'agent_pay_b';
const EMPTY = 'agent_pay_empty';
const A_STATEMENTS = 25;
const B_STATEMENTS = 3;
const STATUSES = PAYOUT_STATUSES;
let msgId = 0;

const balance = (agent: string, currency: string, base: number) => payoutBalanceEvent(agent, currency, base);

const statement = payoutStatementEvent;

/** The statement as the API returns it: the event without version, timestamps in milliseconds. */
function expected(agent: string, n: number): PayoutStatement {
  const { version: _version, ...record } = statement(agent, n);
  return record as PayoutStatement;
}

const publish = (kind: 'balance' | 'readiness' | 'statement', payload: unknown) =>
  producer.publishRaw(`events.payouts.${kind}`, JSON.stringify(payload), `http-${++msgId}`);

/** GET with an ID token (platform A's unless told); `null` sends no Authorization header. */
function get(path: string, credential: string | null = tokens[A]): Promise<Response> {
  return fetch(`${base}/agent-payouts/me${path}`, { headers: credential === null ? {} : { authorization: `Bearer ${credential}` } });
}

async function ok<T>(path: string, credential?: string): Promise<T> {
  const response = await get(path, credential);
  expect([path, response.status]).toEqual([path, 200]);
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
  expect(response.headers.get('cache-control')).toBe('private, no-store');
  return (await response.json()) as T;
}

interface Page {
  items: PayoutStatement[];
  page: number;
  page_size: number;
  total: number;
}

beforeAll(async () => {
  const idp = await startIdentityProvider(stack);
  key = idp.key;
  payouts = await startPayoutsRead({ ...stack.urls, PAYOUTS_INGEST_BATCH_SIZE: 50 });
  stack.atEnd(() => payouts?.close());
  ({ base } = await startGateway(stack, { jwksUrl: idp.jwks.url, extra: { PAYOUTS_REQUEST_TIMEOUT_MS: '1000' } }));
  for (const agent of [A, B, EMPTY, 'agent_pay_suspended']) await seedPlatform(stack, agent, { owner: `uid_${agent}`, keys: [] });
  await (await identityOf(stack)).setStatus('agent_pay_suspended', 'suspended');
  apiKey = (await (await identityOf(stack)).createKey(A, 'live')).api_key;
  for (const agent of [A, B, EMPTY, 'agent_pay_suspended']) tokens[agent] = await signIdToken(key, { sub: `uid_${agent}`, role: 'agent' });

  producer = await connectStackProducer(stack);
  await publish('balance', balance(A, 'USD', 1000));
  await publish('balance', balance(A, 'EUR', 500));
  await publish('balance', balance(B, 'USD', 7));
  await publish('readiness', {
    agent_id: A,
    setup_status: 'in_progress',
    missing_fields: ['tax_form'],
    thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
    blocked_reason: 'tax form missing',
    updated_at: '2026-11-20T08:00:00Z',
    version: 1,
  });
  // Out of order, interleaved between the two platforms.
  for (let n = A_STATEMENTS - 1; n >= 0; n--) {
    await publish('statement', statement(A, n));
    if (n < B_STATEMENTS) await publish('statement', statement(B, n));
  }
  await waitForConsumer(producer, Streams.events, Durables.payoutsRead, { delivered: msgId, what: 'payouts-read caught up' });
});

describe('GET /agent-payouts/me/balance', () => {
  it('200 with every currency of the platform, by currency code, in integer micros', async () => {
    expect(await ok('/balance')).toEqual({
      balances: [
        { agent_id: A, currency: 'EUR', pending_micros: 500, available_micros: 501, locked_micros: 502, paid_out_micros: 503, updated_at: '2026-11-20T10:15:42.120Z' },
        { agent_id: A, currency: 'USD', pending_micros: 1000, available_micros: 1001, locked_micros: 1002, paid_out_micros: 1003, updated_at: '2026-11-20T10:15:42.120Z' },
      ],
    });
  });

  it('200 with no balances for a platform without payout data', async () => {
    expect(await ok('/balance', tokens[EMPTY])).toEqual({ balances: [] });
  });
});

describe('GET /agent-payouts/me/readiness', () => {
  it('200 with setup status, missing fields, thresholds and blocked reason', async () => {
    expect(await ok('/readiness')).toEqual({
      agent_id: A,
      setup_status: 'in_progress',
      missing_fields: ['tax_form'],
      thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
      blocked_reason: 'tax form missing',
      updated_at: '2026-11-20T08:00:00.000Z',
    });
  });

  it('200 not_started before any readiness event', async () => {
    expect(await ok('/readiness', tokens[EMPTY])).toEqual({
      agent_id: EMPTY,
      setup_status: 'not_started',
      missing_fields: [],
      thresholds: [],
      blocked_reason: null,
      updated_at: null,
    });
  });
});

describe('GET /agent-payouts/me/overview', () => {
  it('200 with balances, readiness, the latest statement and the 5 most recent', async () => {
    const overview = await ok<Record<string, unknown>>('/overview');
    expect(Object.keys(overview).sort()).toEqual(['balances', 'latest_statement', 'readiness', 'recent_statements']);
    expect((overview.balances as unknown[]).length).toBe(2);
    expect(overview.readiness).toMatchObject({ agent_id: A, setup_status: 'in_progress' });
    const recent = [24, 23, 22, 21, 20].map((n) => expected(A, n));
    expect(overview.recent_statements).toEqual(recent);
    expect(overview.latest_statement).toEqual(recent[0]);
  });

  it('200 with empty parts for a platform without payout data', async () => {
    expect(await ok('/overview', tokens[EMPTY])).toMatchObject({ balances: [], latest_statement: null, recent_statements: [], readiness: { setup_status: 'not_started' } });
  });
});

describe('GET /agent-payouts/me/statements', () => {
  it('200 {items, page, page_size, total}: defaults page 1 and page_size 20, newest period first', async () => {
    const page = await ok<Page>('/statements');
    expect(Object.keys(page).sort()).toEqual(['items', 'page', 'page_size', 'total']);
    expect(page).toMatchObject({ page: 1, page_size: 20, total: A_STATEMENTS });
    expect(page.items).toEqual(Array.from({ length: 20 }, (_, i) => expected(A, A_STATEMENTS - 1 - i)));
  });

  it('pages: the last page is partial, a page beyond the end is empty, pages never overlap', async () => {
    const first = await ok<Page>('/statements?page=1&page_size=10');
    const second = await ok<Page>('/statements?page=2&page_size=10');
    const last = await ok<Page>('/statements?page=3&page_size=10');
    const beyond = await ok<Page>('/statements?page=4&page_size=10');
    expect([first.items.length, second.items.length, last.items.length]).toEqual([10, 10, 5]);
    expect(last).toMatchObject({ page: 3, page_size: 10, total: A_STATEMENTS });
    expect(beyond).toEqual({ items: [], page: 4, page_size: 10, total: A_STATEMENTS });
    const ids = [...first.items, ...second.items, ...last.items].map((s) => s.statement_id);
    expect(new Set(ids).size).toBe(A_STATEMENTS);
    expect(ids).toEqual(Array.from({ length: A_STATEMENTS }, (_, i) => expected(A, A_STATEMENTS - 1 - i).statement_id));
  });

  it('page_size 1 and 100 are the bounds', async () => {
    expect((await ok<Page>('/statements?page_size=1')).items.length).toBe(1);
    expect(await ok<Page>('/statements?page_size=100')).toMatchObject({ page_size: 100, total: A_STATEMENTS });
  });

  it('an empty list for a platform without statements', async () => {
    expect(await ok<Page>('/statements', tokens[EMPTY])).toEqual({ items: [], page: 1, page_size: 20, total: 0 });
  });

  it.each(STATUSES)('status=%s lists only that status', async (status) => {
    const page = await ok<Page>(`/statements?status=${status}&page_size=100`);
    const wanted = Array.from({ length: A_STATEMENTS }, (_, n) => n).filter((n) => STATUSES[n % 4] === status).reverse();
    expect(page.total).toBe(wanted.length);
    expect(page.items).toEqual(wanted.map((n) => expected(A, n)));
  });

  it('status combines with pagination', async () => {
    const page = await ok<Page>('/statements?status=PAID&page=2&page_size=4');
    expect(page).toMatchObject({ page: 2, page_size: 4, total: 6 });
    expect(page.items.map((s) => s.statement_id)).toEqual([expected(A, 7).statement_id, expected(A, 3).statement_id]);
  });
});

describe('GET /agent-payouts/me/statements/{statement_id}', () => {
  it('200 with the statement and its transfer (another currency, amount received, fee, exact exchange rate)', async () => {
    const paid = await ok<PayoutStatement>(`/statements/${expected(A, 23).statement_id}`);
    expect(paid).toEqual(expected(A, 23));
    expect(paid.transfer).toMatchObject({ target_currency: 'EUR', amount_received_micros: 8_200_000, fee_micros: 150_000, exchange_rate: '0.9277' });
    const failed = await ok<PayoutStatement>(`/statements/${expected(A, 2).statement_id}`);
    expect(failed).toMatchObject({ status: 'FAILED', failure: { code: 'account_closed' }, transfer: null });
  });

  it("404 for another platform's statement, exactly as for an unknown id", async () => {
    const other = await expectProblem(await get(`/statements/${expected(B, 0).statement_id}`), 404, 'statement-not-found');
    const unknown = await expectProblem(await get('/statements/st_does_not_exist'), 404, 'statement-not-found');
    expect(other).toEqual(unknown);
    // The owner sees it.
    expect(await ok<PayoutStatement>(`/statements/${expected(B, 0).statement_id}`, tokens[B])).toEqual(expected(B, 0));
  });

  it('404 for unknown ids of any shape; percent-encoded ids are decoded', async () => {
    await expectProblem(await get(`/statements/${'x'.repeat(99)}`), 404, 'statement-not-found');
    await expectProblem(await get('/statements/%F0%9F%92%B8%20%22'), 404, 'statement-not-found');
    // PostgreSQL text never holds NUL, so no statement has an id with one (asking would be an error).
    await expectProblem(await get('/statements/%00'), 404, 'statement-not-found');
    await expectProblem(await get('/statements/st_%00_x'), 404, 'statement-not-found');
    // Ids up to the contract's 200 characters reach the route; longer ones are simply unknown.
    await expectProblem(await get(`/statements/${'x'.repeat(200)}`), 404, 'statement-not-found');
    await expectProblem(await get(`/statements/${'x'.repeat(201)}`), 404, 'statement-not-found');
    expect((await get(`/statements/${encodeURIComponent(expected(A, 1).statement_id)}`)).status).toBe(200);
  });
});

describe('GET /agent-payouts/me/history', () => {
  it('200 with the locked, blocked, failed and paid statements, paginated', async () => {
    const page = await ok<Page>('/history');
    expect(page).toMatchObject({ page: 1, page_size: 20, total: A_STATEMENTS });
    expect(page.items[0]).toEqual(expected(A, 24));
    const last = await ok<Page>('/history?page=3&page_size=12');
    expect(last).toMatchObject({ page: 3, page_size: 12, total: A_STATEMENTS });
    expect(last.items).toEqual([expected(A, 0)]);
    expect(await ok<Page>('/history?page=9')).toEqual({ items: [], page: 9, page_size: 20, total: A_STATEMENTS });
    expect(await ok<Page>('/history', tokens[EMPTY])).toEqual({ items: [], page: 1, page_size: 20, total: 0 });
  });
});

describe('platform isolation', () => {
  it("each platform sees only its own balances and statements, on every endpoint", async () => {
    expect(await ok('/balance', tokens[B])).toEqual({
      balances: [{ agent_id: B, currency: 'USD', pending_micros: 7, available_micros: 8, locked_micros: 9, paid_out_micros: 10, updated_at: '2026-11-20T10:15:42.120Z' }],
    });
    const statements = await ok<Page>('/statements?page_size=100', tokens[B]);
    expect(statements.total).toBe(B_STATEMENTS);
    expect(statements.items).toEqual([2, 1, 0].map((n) => expected(B, n)));
    const history = await ok<Page>('/history?page_size=100', tokens[B]);
    expect(history.items.every((s) => s.agent_id === B)).toBe(true);
    const overview = await ok<{ recent_statements: PayoutStatement[]; latest_statement: PayoutStatement; readiness: { agent_id: string } }>('/overview', tokens[B]);
    expect(overview.recent_statements.map((s) => s.agent_id)).toEqual([B, B, B]);
    expect(overview.readiness.agent_id).toBe(B);
    const all = await ok<Page>('/statements?page_size=100');
    expect(all.items.every((s) => s.agent_id === A)).toBe(true);
  });

  it('an agent_id in the query cannot choose the platform (422)', async () => {
    await expectProblem(await get(`/statements?agent_id=${B}`), 422, 'invalid-query');
    await expectProblem(await get(`/balance?agent_id=${B}`), 422, 'invalid-query');
  });
});

describe('authentication', () => {
  const PATHS = ['/balance', '/readiness', '/overview', '/statements', `/statements/st_${A}_00`, '/history'];

  it.each(PATHS)('401 for %s without a token, with an API key, and with a token without the agent role', async (path) => {
    await expectProblem(await get(path, null), 401, 'invalid-id-token');
    const withKey = await expectProblem(await get(path, apiKey), 401, 'invalid-id-token');
    expect(withKey.detail).toMatch(/API key/);
    const noRole = await expectProblem(await get(path, await signIdToken(key, { sub: `uid_${A}` })), 401, 'invalid-id-token');
    expect(noRole.detail).toBe('The ID token does not carry the agent role; sign in with an account that has the agent role.');
    await expectProblem(await get(path, await signIdToken(key, { sub: `uid_${A}`, role: 'owner' })), 401, 'invalid-id-token');
  });

  it('401 for an expired token; the role may be one of several', async () => {
    const expired = await signIdToken(key, { sub: `uid_${A}`, role: 'agent', iat: 1_700_000_000, exp: 1_700_003_600 });
    await expectProblem(await get('/balance', expired), 401, 'invalid-id-token');
    const several = await signIdToken(key, { sub: `uid_${A}`, role: ['viewer', 'agent'] });
    expect((await get('/balance', several)).status).toBe(200);
  });

  it('checks the token before the query: 401, not 422, for a bad token with a bad query', async () => {
    await expectProblem(await get('/statements?page=0&nonsense=1', 'not-a-token'), 401, 'invalid-id-token');
  });

  it('403 for a suspended platform', async () => {
    await expectProblem(await get('/balance', tokens.agent_pay_suspended), 403, 'account-unavailable');
  });
});

describe('query validation (422)', () => {
  it.each([
    ['/statements?sort=period_start', /Unsupported query parameter "sort"/],
    ['/statements?page=1&page=2', /page must be given at most once/],
    ['/statements?page=0', /page must be an integer/],
    ['/statements?page=-1', /page must be an integer/],
    ['/statements?page=1.5', /page must be an integer/],
    ['/statements?page=abc', /page must be an integer/],
    ['/statements?page=1e2', /page must be an integer/],
    ['/statements?page=%201', /page must be an integer/],
    ['/statements?page=99999999999999999', /page must be an integer/],
    ['/statements?page=10001', /page must be an integer from 1 to 10000; got "10001"/],
    ['/statements?page=', /page must be an integer/],
    ['/statements?page', /page must be an integer/],
    ['/statements?page_size=0', /page_size must be an integer from 1 to 100/],
    ['/statements?page_size=101', /page_size must be an integer from 1 to 100/],
    ['/statements?page_size=20.0', /page_size must be an integer from 1 to 100/],
    ['/statements?status=paid', /Unsupported status "paid"/],
    ['/statements?status=OPEN', /Unsupported status/],
    ['/statements?status=', /Unsupported status/],
    ['/statements?status=PAID&status=LOCKED', /status must be given at most once/],
    ['/statements?%zz=1', /percent-encoding/],
    ['/history?status=PAID', /Unsupported query parameter "status"/],
    ['/history?page_size=500', /page_size must be an integer from 1 to 100/],
    ['/balance?page=1', /takes no query parameters/],
    ['/readiness?x', /takes no query parameters/],
    ['/overview?recent=10', /takes no query parameters/],
    [`/statements/st_${A}_00?expand=transfer`, /takes no query parameters/],
  ])('%s', async (path, detail) => {
    const problem = await expectProblem(await get(path), 422, 'invalid-query');
    expect(problem.detail).toMatch(detail);
  });

  it('accepts empty && segments and percent-encoded names', async () => {
    expect(await ok<Page>('/statements?&page=2&&page%5Fsize=5&')).toMatchObject({ page: 2, page_size: 5 });
  });
});

describe('OpenAPI', () => {
  it('documents the six endpoints with the ID-token scheme, their schemas and statuses', async () => {
    const document = (await (await fetch(`${base}/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[]; parameters?: { name: string }[] }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    };
    const statuses = ['200', '401', '403', '422', '429', '503'];
    for (const path of ['balance', 'readiness', 'overview', 'statements', 'history']) {
      const operation = document.paths[`/agent-payouts/me/${path}`]?.get;
      expect([path, Object.keys(operation?.responses ?? {}).sort()]).toEqual([path, statuses]);
      expect(operation.security).toEqual([{ id_token: [] }]);
    }
    const one = document.paths['/agent-payouts/me/statements/{statement_id}'].get;
    expect(Object.keys(one.responses).sort()).toEqual(['200', '401', '403', '404', '422', '429', '503']);
    expect(document.paths['/agent-payouts/me/statements'].get.parameters?.map((p) => p.name).sort()).toEqual(['page', 'page_size', 'status']);
    expect(document.paths['/agent-payouts/me/history'].get.parameters?.map((p) => p.name).sort()).toEqual(['page', 'page_size']);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['PayoutBalances', 'PayoutReadiness', 'PayoutStatement', 'PayoutTransfer', 'PayoutStatementPage', 'PayoutOverview']),
    );
    // Each record schema has exactly the fields the API returns, all required (nullable ones as null).
    const paid = expected(A, 23);
    const records: [string, object][] = [
      ['PayoutStatement', paid],
      ['PayoutTransfer', paid.transfer!],
      ['PayoutFailure', expected(A, 2).failure!],
      ['PayoutBalance', balance(A, 'USD', 1)],
      ['PayoutReadiness', { agent_id: A, setup_status: '', missing_fields: [], thresholds: [], blocked_reason: null, updated_at: null }],
      ['PayoutOverview', { balances: [], readiness: {}, latest_statement: null, recent_statements: [] }],
      ['PayoutStatementPage', { items: [], page: 1, page_size: 20, total: 0 }],
    ];
    for (const [name, record] of records) {
      const keys = Object.keys(record).filter((k) => k !== 'version').sort();
      const schema = document.components.schemas[name];
      expect([name, Object.keys(schema.properties ?? {}).sort()]).toEqual([name, keys]);
      expect([name, [...(schema.required ?? [])].sort()]).toEqual([name, keys]);
    }
  });
});

// Last: stops payouts-read.
describe('payouts-read unavailable', () => {
  it('503 fast with Retry-After when payouts-read does not answer, and 200 again when it is back', async () => {
    await payouts!.close();
    payouts = undefined;
    // Queries not asked before: a reply the gateway still holds would be answered from its cache
    // (still the current read model, as nothing can change while payouts-read is down).
    for (const path of ['/statements?page=2&page_size=3', '/history?page=3&page_size=2', '/statements?page=4&page_size=3&status=PAID']) {
      const started = Date.now();
      const response = await get(path);
      await expectProblem(response, 503, 'payouts-unavailable');
      expect(response.headers.get('retry-after')).toBe('5');
      expect(Date.now() - started).toBeLessThan(3000);
    }
    payouts = await startPayoutsRead(stack.urls);
    expect((await ok<Page>('/statements')).total).toBe(A_STATEMENTS);
  });
});
