import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  QueueGroups,
  RECOMMEND_DEFAULT_LATENCY_BUDGET_MS,
  RECOMMEND_MAX_LATENCY_BUDGET_MS,
  RECOMMEND_MIN_LATENCY_BUDGET_MS,
  RpcSubjects,
  type RankedRecommendation,
  type RecommendResult,
  type RpcReply,
} from '#libs/contracts';
import type { RecommendRequest } from '#libs/recommend-request';
import { expectProblem, identityOf, seedPlatform, startGateway, useTestStack } from '../support/index.js';

/**
 * POST /agent/recommend in front of a stand-in recommendations service: a real NATS subscriber
 * on recommendations.v1.recommend that records what the gateway asks and answers by query.
 * (test/e2e/recommendation-loop.spec.ts runs the real service.) Auth, media type, every kind of
 * bad body, the RPC request the gateway builds, found / none / broken answers, and 503 when no
 * service answers.
 */

const PUBLIC_BASE_URL = 'https://api.weave.test/edge';
const SPEC_FIELDS = [
  'ad_id', 'click_url', 'contextual_relevance_score', 'creative_input', 'exposure_url', 'product_id', 'product_title',
  'recommendation_id', 'tail_summary', 'weave_summary',
];

const stack = useTestStack();
let base: string;
let responder: NatsConnection;
let subscription: Subscription | undefined;
const received: RecommendRequest[] = [];
let keys: Record<'live' | 'test' | 'suspended', string>;

function ranked(id: string, overrides: Partial<RankedRecommendation> = {}): RankedRecommendation {
  return {
    recommendation_id: id,
    ad_id: `ad_${id}`,
    product_id: `prod_${id}`,
    product_title: `Product ${id}`,
    weave_summary: `Weave ${id}`,
    tail_summary: `Tail ${id}`,
    creative_input: { short_description: `Short ${id}`, image: 'https://cdn.example/x.png' },
    contextual_relevance_score: 87.5,
    landing_url: `https://shop.example/${id}?utm=weave`,
    created_at: '2026-11-25T10:15:42.120Z',
    ...overrides,
  };
}

/** What the stand-in service answers for a query (no answer at all for "silent"). */
function answerFor(request: RecommendRequest): RpcReply<RecommendResult> | undefined {
  const result = (recommendations: RankedRecommendation[]): RpcReply<RecommendResult> => ({
    ok: true,
    result: { request_id: request.request_id, query: request.query, recommendations },
  });
  switch (request.query) {
    case 'silent':
      return undefined;
    case 'nothing here':
      return result([]);
    case 'service unavailable':
      return { ok: false, error: { code: 'unavailable', message: 'search timed out' } };
    case 'service refuses':
      return { ok: false, error: { code: 'invalid_request', message: 'query: too vague' } };
    case 'broken entries':
      return result([
        ranked('rec_js', { landing_url: 'javascript:alert(1)' }),
        ranked('rec_score', { contextual_relevance_score: 140 }),
        ranked('rec_time', { created_at: 'yesterday' }),
        ranked('rec_good'),
      ]);
    default:
      return result([ranked('rec_a'), ranked('rec_b', { contextual_relevance_score: 40, weave_summary: undefined, tail_summary: undefined })]);
  }
}

async function serveStandIn(): Promise<void> {
  subscription = responder.subscribe(RpcSubjects.recommend, {
    queue: QueueGroups.recommendations,
    callback: (_error, msg) => {
      const request = JSON.parse(new TextDecoder().decode(msg.data)) as RecommendRequest;
      received.push(request);
      const answer = answerFor(request);
      if (answer) msg.respond(new TextEncoder().encode(JSON.stringify(answer)));
    },
  });
  await responder.flush();
}

beforeAll(async () => {
  ({ base } = await startGateway(stack, {
    oidc: false,
    extra: { LOG_LEVEL: 'warn', TRACKING_SIGNING_SECRET: 'gateway-recommend-test-secret-0123456789', PUBLIC_BASE_URL: `${PUBLIC_BASE_URL}/` },
  }));
  keys = { ...(await seedPlatform(stack, 'agent_rec', { keys: ['live', 'test'] })).keys, suspended: '' };
  keys.suspended = (await seedPlatform(stack, 'agent_rec_suspended')).key;
  await (await identityOf(stack)).setStatus('agent_rec_suspended', 'suspended');
  responder = await connect({ servers: stack.nats.url });
  stack.atEnd(() => responder.close());
  await serveStandIn();
});

function recommend(body: unknown, options: { key?: string | null; contentType?: string; raw?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', ...options.headers };
  const key = options.key === undefined ? keys.live : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return fetch(`${base}/agent/recommend`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
}

const valid = { session_id: 'sess_1', message_id: 'msg_1', query: 'running shoes' };

describe('authentication and account', () => {
  it('answers 401 without a key, with a non-Bearer header and with an unknown key, and asks no service', async () => {
    const before = received.length;
    await expectProblem(await recommend(valid, { key: null }), 401, 'invalid-api-key');
    await expectProblem(await recommend(valid, { key: null, headers: { authorization: `Basic ${keys.live}` } }), 401, 'invalid-api-key');
    await expectProblem(await recommend(valid, { key: `sk_live_${'x'.repeat(40)}` }), 401, 'invalid-api-key');
    expect(received.length).toBe(before);
  });

  it('answers 403 for a suspended platform, before looking at the body', async () => {
    await expectProblem(await recommend({ nonsense: true }, { key: keys.suspended }), 403, 'account-unavailable');
  });

  it('checks the key before the body: 401 for a bad body without a key', async () => {
    await expectProblem(await recommend({ nonsense: true }, { key: null }), 401, 'invalid-api-key');
  });
});

describe('body validation', () => {
  it('answers 415 for a body that is not application/json', async () => {
    await expectProblem(await recommend(undefined, { contentType: 'text/plain', raw: 'running shoes' }), 415, 'unsupported-media-type');
  });

  const long = (n: number) => 'x'.repeat(n);
  const cases: [string, unknown, RegExp][] = [
    ['an array body', [valid], /JSON object/],
    ['a missing session_id', { message_id: 'm', query: 'q' }, /session_id is required/],
    ['a missing message_id', { session_id: 's', query: 'q' }, /message_id is required/],
    ['a missing query', { session_id: 's', message_id: 'm' }, /query is required/],
    ['a blank query', { ...valid, query: '   ' }, /query must not be empty/],
    ['an empty session_id', { ...valid, session_id: '' }, /session_id must not be empty/],
    ['a numeric message_id', { ...valid, message_id: 42 }, /message_id must be a string/],
    ['a null query', { ...valid, query: null }, /query must be a string/],
    ['a query over 2000 characters', { ...valid, query: long(2001) }, /query must be at most 2000/],
    ['a session_id over 200 characters', { ...valid, session_id: long(201) }, /session_id must be at most 200/],
    ['a latency budget as a string', { ...valid, latency_budget_ms: '500' }, /latency_budget_ms must be a positive number/],
    ['a zero latency budget', { ...valid, latency_budget_ms: 0 }, /latency_budget_ms must be a positive number/],
    ['a negative latency budget', { ...valid, latency_budget_ms: -5 }, /latency_budget_ms must be a positive number/],
    ['messages that are not an array', { ...valid, messages: 'hello' }, /messages must be an array/],
    ['51 messages', { ...valid, messages: Array.from({ length: 51 }, () => ({ role: 'user', content: 'hi' })) }, /at most 50 entries/],
    ['a message without content', { ...valid, messages: [{ role: 'user' }] }, /messages\[0\]\.content is required/],
    ['a message with a numeric role', { ...valid, messages: [{ role: 1, content: 'hi' }] }, /messages\[0\]\.role must be a string/],
    ['a message with an unknown field', { ...valid, messages: [{ role: 'user', content: 'hi', name: 'bob' }] }, /Unsupported field "name" in messages\[0\]/],
    ['an invalid locale', { ...valid, locale: 'not a locale!' }, /locale must be a BCP 47/],
    ['a three-letter geo', { ...valid, geo: 'USA' }, /geo must be at most 2|geo must be an ISO/],
    ['a numeric geo', { ...valid, geo: '12' }, /geo must be an ISO 3166-1/],
    ['a user_id that is not a string', { ...valid, user_id: { hash: 'x' } }, /user_id must be a string/],
    ['an unknown field', { ...valid, agent_id: 'agent_other' }, /Unsupported field "agent_id"/],
    ['an unknown camelCase field', { ...valid, sessionId: 's' }, /Unsupported field "sessionId"/],
  ];

  it.each(cases)('answers 422 for %s, and asks no service', async (_name, body, detail) => {
    const before = received.length;
    const { detail: text } = await expectProblem(await recommend(body), 422, 'invalid-body');
    expect(text).toMatch(detail);
    expect(received.length).toBe(before);
  });

  it('answers a 4xx problem, not a 500, for malformed JSON, and asks no service', async () => {
    const before = received.length;
    const response = await recommend(undefined, { raw: '{"session_id": ' });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(received.length).toBe(before);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('the request to the recommendations service', () => {
  it('carries the body, the platform and live traffic of a live key, the default budget and the request id', async () => {
    const before = received.length;
    const body = {
      ...valid,
      session_id: 'sess_full',
      messages: [{ role: 'user', content: 'I run marathons', id: 'm0' }, { role: 'assistant', content: 'Nice!' }],
      locale: 'en-US',
      geo: 'us',
      user_id: 'u_hash',
      model: 'gpt-x',
      platform_id: 'web-chat',
      platform_surface: 'web',
    };
    const response = await recommend(body, { headers: { 'x-request-id': 'req-recommend-1' } });
    expect(response.status).toBe(200);
    expect(received.length).toBe(before + 1);
    expect(received[received.length - 1]).toEqual({
      ...body,
      agent_id: 'agent_rec',
      traffic: 'live',
      latency_budget_ms: RECOMMEND_DEFAULT_LATENCY_BUDGET_MS,
      request_id: 'req-recommend-1',
    });
  });

  it('sends test traffic for a test key', async () => {
    const response = await recommend({ ...valid, message_id: 'msg_test' }, { key: keys.test });
    expect(response.status).toBe(200);
    expect(received[received.length - 1]).toMatchObject({ agent_id: 'agent_rec', traffic: 'test', message_id: 'msg_test' });
  });

  it('brings the latency budget into the served range', async () => {
    const budgets: [number, number][] = [
      [1, RECOMMEND_MIN_LATENCY_BUDGET_MS],
      [333.4, 333],
      [10 ** 9, RECOMMEND_MAX_LATENCY_BUDGET_MS],
    ];
    for (const [given, expected] of budgets) {
      expect((await recommend({ ...valid, latency_budget_ms: given })).status).toBe(200);
      expect(received[received.length - 1].latency_budget_ms).toBe(expected);
    }
  });
});

describe('answers', () => {
  it('answers 200 with the SPEC fields and tracking URLs on the public base URL', async () => {
    const response = await recommend(valid, { headers: { 'x-request-id': 'req-found' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { request_id: string; query: string; error?: string; recommendations: Record<string, unknown>[] };
    expect(body.request_id).toBe('req-found');
    expect(response.headers.get('x-request-id')).toBe('req-found');
    expect(body.query).toBe('running shoes');
    expect(body.error).toBeUndefined();
    expect(body.recommendations.map((r) => r.recommendation_id)).toEqual(['rec_a', 'rec_b']);
    const [first, second] = body.recommendations;
    expect(Object.keys(first).sort()).toEqual(SPEC_FIELDS);
    // landing_url and created_at stay inside the signed tokens.
    expect(Object.keys(second).sort()).toEqual(SPEC_FIELDS.filter((f) => !f.endsWith('_summary')));
    expect(first).toMatchObject({
      ad_id: 'ad_rec_a',
      product_id: 'prod_rec_a',
      product_title: 'Product rec_a',
      weave_summary: 'Weave rec_a',
      tail_summary: 'Tail rec_a',
      creative_input: { short_description: 'Short rec_a', image: 'https://cdn.example/x.png' },
      contextual_relevance_score: 87.5,
    });
    expect(first.exposure_url).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/track/exposure\\?t=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));
    expect(first.click_url).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/track/click\\?t=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));
    expect(first.exposure_url).not.toBe(second.exposure_url);
    // The payload is readable (base64url JSON); the signature is what makes it trustworthy.
    const claims = (url: unknown) => JSON.parse(Buffer.from(new URL(String(url)).searchParams.get('t')!.split('.')[0], 'base64url').toString('utf8'));
    const common = {
      v: 1,
      recommendation_id: 'rec_a',
      agent_id: 'agent_rec',
      traffic: 'live',
      recommendation_created_at: '2026-11-25T10:15:42.120Z',
      ad_id: 'ad_rec_a',
      product_id: 'prod_rec_a',
      // When the link stops recording: TRACKING_LINK_TTL_DAYS (30) from now, in seconds.
      exp: expect.any(Number),
    };
    expect(Math.abs(claims(first.exposure_url).exp - (Date.now() / 1000 + 30 * 86_400))).toBeLessThan(120);
    expect(claims(first.exposure_url)).toEqual({ ...common, kind: 'shown' });
    expect(claims(first.click_url)).toEqual({ ...common, kind: 'clicked', landing_url: 'https://shop.example/rec_a?utm=weave' });
  });

  it('answers 200 with an empty list and an error message when nothing is found', async () => {
    const response = await recommend({ ...valid, query: 'nothing here' });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({ request_id: expect.any(String), query: 'nothing here', recommendations: [], error: expect.stringMatching(/no recommendations/i) });
  });

  it('leaves out entries of the service that break the contract (open redirect, score, timestamp)', async () => {
    const response = await recommend({ ...valid, query: 'broken entries' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { recommendations: { recommendation_id: string }[] };
    expect(body.recommendations.map((r) => r.recommendation_id)).toEqual(['rec_good']);
  });

  it('maps the service errors: unavailable → 503 with Retry-After, invalid_request → 422', async () => {
    const unavailable = await recommend({ ...valid, query: 'service unavailable' });
    await expectProblem(unavailable, 503, 'service-unavailable');
    expect(Number(unavailable.headers.get('retry-after'))).toBeGreaterThan(0);
    const refused = await recommend({ ...valid, query: 'service refuses' });
    expect((await expectProblem(refused, 422, 'invalid-body')).detail).toBe('query: too vague');
  });

  it('answers 503 with Retry-After when the service stays silent past the budget', async () => {
    const response = await recommend({ ...valid, query: 'silent', latency_budget_ms: 60 });
    await expectProblem(response, 503, 'service-unavailable');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers 503 at once when no recommendations service listens, and 200 again when one does', async () => {
    await subscription!.drain();
    await responder.flush();
    const started = Date.now();
    const response = await recommend({ ...valid, latency_budget_ms: RECOMMEND_MAX_LATENCY_BUDGET_MS });
    await expectProblem(response, 503, 'service-unavailable');
    // NATS reports "no responders" at once: the gateway does not wait out the 10 s budget.
    expect(Date.now() - started).toBeLessThan(RECOMMEND_MAX_LATENCY_BUDGET_MS);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    await serveStandIn();
    expect((await recommend(valid)).status).toBe(200);
  });
});
