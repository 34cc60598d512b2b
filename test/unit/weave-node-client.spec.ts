// @vendor/weave-node against real local HTTP servers: the request it sends, how it reads answers
// and errors, validation, and where the key must never appear. Retries, backoff, abort and
// timeouts are in test/integration/weave-node-retries.spec.ts; the packed tarball in
// test/integration/weave-node-packaging.spec.ts. The BUILT package (libs/weave-node/dist) is what
// runs here: it is built before the tests when missing or older than its sources.
import type * as http from 'node:http';
import { inspect } from 'node:util';
import { expectNotInError, json, loadBuiltWeaveNode, rejection, useRecordingServers, type WeaveNode } from '../support/index.js';

const API_KEY = 'sk_test_SuperSecretKey_0123456789';

/** An RFC 9457 problem, as the gateway answers errors. */
function problem(res: http.ServerResponse, status: number, fields: { type?: string; title?: string; detail?: string }): void {
  res.writeHead(status, { 'content-type': 'application/problem+json', 'x-request-id': 'req_problem' });
  res.end(JSON.stringify({ status, ...fields }));
}

const RECOMMENDATION = {
  recommendation_id: 'rec_1',
  ad_id: 'ad_1',
  product_id: 'prod_1',
  product_title: 'Trail Runner 3',
  click_url: 'https://gw.example/t/click/abc',
  exposure_url: 'https://gw.example/t/exposure/abc',
  weave_summary: 'The Trail Runner 3 is a light shoe for rocky paths.',
  tail_summary: 'Sponsored: Trail Runner 3 — light trail shoe.',
  creative_input: { short_description: 'Light trail shoe' },
  contextual_relevance_score: 87,
  internal_bid_micros: 1234, // not a SPEC field: must not reach the caller
};

const OPTIONS = { sessionId: 'sess-1', messageId: 'msg-1', query: 'best trail running shoes' };

let lib: WeaveNode;
const server = useRecordingServers();

beforeAll(async () => {
  lib = await loadBuiltWeaveNode();
}, 120000);

describe('@vendor/weave-node ServiceClient: request, answers, validation (built package, real HTTP server)', () => {
  it('found: posts the snake_case body with bearer key and idempotency key, maps SPEC fields only', async () => {
    const s = await server((_req, res) => json(res, 200, { recommendations: [RECOMMENDATION], request_id: 'req_42' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave({
      ...OPTIONS,
      latencyBudgetMs: 250,
      messages: [{ role: 'user', content: 'hi', id: 'm0' }],
      locale: 'en-US',
      geo: 'US',
      userId: 'u_hash',
      model: 'gpt-x',
      platformId: 'plat_1',
      platformSurface: 'web',
    });
    const { internal_bid_micros: _hidden, ...visible } = RECOMMENDATION;
    expect(result).toEqual({ found: true, recommendations: [visible], query: OPTIONS.query, requestId: 'req_42' });
    expect(s.seen).toHaveLength(1);
    const [request] = s.seen;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/agent/recommend');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['idempotency-key']).toMatch(/^weave-[0-9a-f]{48}$/);
    expect(request.headers['user-agent']).toMatch(/^@vendor\/weave-node\/\d+\.\d+\.\d+ node\/v\d+/);
    expect(request.headers['x-retry-count']).toBe('0');
    expect(JSON.parse(request.body)).toEqual({
      session_id: 'sess-1',
      message_id: 'msg-1',
      query: OPTIONS.query,
      latency_budget_ms: 250,
      messages: [{ role: 'user', content: 'hi', id: 'm0' }],
      locale: 'en-US',
      geo: 'US',
      user_id: 'u_hash',
      model: 'gpt-x',
      platform_id: 'plat_1',
      platform_surface: 'web',
    });
  });

  it('not found: an empty list resolves { found: false, error } and does not throw', async () => {
    const s = await server((_req, res) => json(res, 200, { recommendations: [], request_id: 'req_7' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result.found).toBe(false);
    expect(typeof result.error).toBe('string');
    expect(result.error).not.toBe('');
    expect(result.recommendations).toBeUndefined();
    expect(result.requestId).toBe('req_7');
    expect(s.seen).toHaveLength(1);
  });

  it("not found with the service's message: the wire contract's body { request_id, query, recommendations: [], error }", async () => {
    const s = await server((_req, res) =>
      json(res, 200, { request_id: 'req_8', query: OPTIONS.query, recommendations: [], error: 'No recommendation matches this query.' }),
    );
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    expect(await client.getRecommendationsForWeave(OPTIONS)).toEqual({
      found: false,
      error: 'No recommendation matches this query.',
      query: OPTIONS.query,
      requestId: 'req_8',
    });
  });

  it('the same sessionId + messageId gives the same Idempotency-Key; another message another key', async () => {
    const s = await server((_req, res) => json(res, 200, { recommendations: [], request_id: 'r' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    await client.getRecommendationsForWeave(OPTIONS);
    await client.getRecommendationsForWeave(OPTIONS);
    await client.getRecommendationsForWeave({ ...OPTIONS, messageId: 'msg-2' });
    const keys = s.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('401 problem → ServiceAuthenticationError whose message is the detail; a key echoed by the server is redacted everywhere', async () => {
    // A careless server echoing the credential must not make the key leak through the error.
    const s = await server((req, res) =>
      problem(res, 401, {
        type: 'https://docs.weave.example/problems/invalid-api-key',
        title: 'Invalid or missing API key',
        detail: `Send the platform API key as a bearer credential (got ${req.headers.authorization}).`,
      }),
    );
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 0 });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as InstanceType<WeaveNode['ServiceAuthenticationError']>;
    expect(error).toBeInstanceOf(lib.ServiceAuthenticationError);
    expect(error).toBeInstanceOf(lib.ServiceRequestError);
    expect(error).toBeInstanceOf(lib.ServiceError);
    expect(error.name).toBe('ServiceAuthenticationError');
    expect(error.status).toBe(401);
    expect(error.message).toBe('Send the platform API key as a bearer credential (got Bearer [redacted]).');
    expect(error.detail).toBe(error.message);
    expect(error.title).toBe('Invalid or missing API key');
    expect(error.type).toBe('https://docs.weave.example/problems/invalid-api-key');
    expect(error.code).toBe('invalid-api-key');
    expect(error.requestId).toBe('req_problem');
    expectNotInError(error, API_KEY);
  });

  it('a problem without detail gives its title as the message; a legacy { error: { code, message } } body is read too', async () => {
    const titled = await server((_req, res) => problem(res, 403, { type: 'https://docs.weave.example/problems/account-unavailable', title: 'Platform account unavailable' }));
    const legacy = await server((_req, res) => json(res, 404, { error: { code: 'no_route', message: 'nope' } }, { 'x-request-id': 'req_bad' }));
    const bare = await server((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/html' });
      res.end('<html>bad request</html>');
    });
    const forbidden = (await rejection(
      new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: titled.url }).getRecommendationsForWeave(OPTIONS),
    )) as InstanceType<WeaveNode['ServiceAuthenticationError']>;
    expect(forbidden).toBeInstanceOf(lib.ServiceAuthenticationError);
    expect(forbidden.status).toBe(403);
    expect(forbidden.message).toBe('Platform account unavailable');
    expect(forbidden.code).toBe('account-unavailable');
    const notFound = (await rejection(
      new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: legacy.url }).getRecommendationsForWeave(OPTIONS),
    )) as InstanceType<WeaveNode['ServiceRequestError']>;
    expect(notFound).toBeInstanceOf(lib.ServiceRequestError);
    expect(notFound).not.toBeInstanceOf(lib.ServiceAuthenticationError);
    expect([notFound.status, notFound.message, notFound.code, notFound.requestId]).toEqual([404, 'nope', 'no_route', 'req_bad']);
    const badRequest = (await rejection(
      new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: bare.url }).getRecommendationsForWeave(OPTIONS),
    )) as InstanceType<WeaveNode['ServiceRequestError']>;
    expect(badRequest).toBeInstanceOf(lib.ServiceRequestError);
    expect(badRequest.status).toBe(400);
    expect(badRequest.message).toBe('The service answered 400.');
    expect(badRequest.detail).toBeUndefined();
  });

  it.each([
    ['a body that is not JSON', 'not json'],
    ['recommendations that are not an array', JSON.stringify({ recommendations: {} })],
    ['a recommendation without click_url', JSON.stringify({ recommendations: [{ ...RECOMMENDATION, click_url: undefined }] })],
    ['a relevance score above 100', JSON.stringify({ recommendations: [{ ...RECOMMENDATION, contextual_relevance_score: 101 }] })],
    ['a creative_input that is not an object', JSON.stringify({ recommendations: [{ ...RECOMMENDATION, creative_input: 'x' }] })],
  ])('200 with %s → ServiceResponseError (not retried)', async (_what, body) => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_odd' });
      res.end(body);
    });
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as InstanceType<WeaveNode['ServiceResponseError']>;
    expect(error).toBeInstanceOf(lib.ServiceResponseError);
    expect(error.status).toBe(200);
    expect(error.requestId).toBe('req_odd');
    expect(s.seen).toHaveLength(1);
  });

  it('an already aborted signal makes no request', async () => {
    const s = await server((_req, res) => json(res, 200, { recommendations: [] }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const controller = new AbortController();
    controller.abort();
    expect(await rejection(client.getRecommendationsForWeave(OPTIONS, { signal: controller.signal }))).toBeInstanceOf(lib.ServiceAbortError);
    expect(s.seen).toHaveLength(0);
  });

  it('validation errors are raised before any request', async () => {
    const s = await server((_req, res) => json(res, 200, { recommendations: [] }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const invalid: unknown[] = [
      undefined,
      {},
      { ...OPTIONS, sessionId: '' },
      { ...OPTIONS, messageId: '   ' },
      { ...OPTIONS, query: '' },
      { ...OPTIONS, query: 42 },
      { ...OPTIONS, latencyBudgetMs: 0 },
      { ...OPTIONS, latencyBudgetMs: -5 },
      { ...OPTIONS, latencyBudgetMs: '100' },
      { ...OPTIONS, messages: 'hi' },
      { ...OPTIONS, messages: [{ role: 'user' }] },
      { ...OPTIONS, locale: 5 },
    ];
    for (const options of invalid) {
      const error = await rejection(client.getRecommendationsForWeave(options as Parameters<typeof client.getRecommendationsForWeave>[0]));
      expect(error).toBeInstanceOf(lib.ServiceConfigurationError);
    }
    const invalidCallOptions: unknown[] = [{ timeoutMs: 0 }, { timeoutMs: Number.NaN }, { maxRetries: -1 }, { maxRetries: 1.5 }, { signal: 'stop' }];
    for (const callOptions of invalidCallOptions) {
      const error = await rejection(
        client.getRecommendationsForWeave(OPTIONS, callOptions as Parameters<typeof client.getRecommendationsForWeave>[1]),
      );
      expect(error).toBeInstanceOf(lib.ServiceConfigurationError);
    }
    expect(s.seen).toHaveLength(0);
  });

  it('constructor: apiKey required, base URL from option, SERVICE_API_BASE_URL, else production', () => {
    for (const apiKey of [undefined, '', '   ']) {
      expect(() => new lib.ServiceClient({ apiKey } as unknown as ConstructorParameters<WeaveNode['ServiceClient']>[0])).toThrow(
        lib.ServiceConfigurationError,
      );
    }
    // A key that cannot travel in a header is refused at construction, and not echoed.
    for (const apiKey of [`${API_KEY}\nX-Injected: 1`, 'sk_test_with space', 'sk_test_é']) {
      let thrown: unknown;
      try {
        new lib.ServiceClient({ apiKey });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(lib.ServiceConfigurationError);
      expect((thrown as Error).message).not.toContain(apiKey.slice(0, 12));
    }
    expect(() => new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: 'ftp://x' })).toThrow(lib.ServiceConfigurationError);
    expect(() => new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: 'https://user:pw@host.example' })).toThrow(lib.ServiceConfigurationError);
    expect(() => new lib.ServiceClient({ apiKey: API_KEY, timeoutMs: 0 })).toThrow(lib.ServiceConfigurationError);
    expect(new lib.ServiceClient({ apiKey: API_KEY }).maxRetries).toBe(lib.DEFAULT_MAX_RETRIES);
    expect(lib.DEFAULT_MAX_RETRIES).toBe(2);
    expect(new lib.ServiceClient({ apiKey: API_KEY }).timeoutMs).toBe(lib.DEFAULT_TIMEOUT_MS);
    expect(() => new lib.ServiceClient({ apiKey: API_KEY, maxRetries: -1 })).toThrow(lib.ServiceConfigurationError);
    const previous = process.env.SERVICE_API_BASE_URL;
    try {
      delete process.env.SERVICE_API_BASE_URL;
      expect(new lib.ServiceClient({ apiKey: API_KEY }).apiBaseUrl).toBe(lib.DEFAULT_API_BASE_URL);
      process.env.SERVICE_API_BASE_URL = 'http://127.0.0.1:9/base/';
      expect(new lib.ServiceClient({ apiKey: API_KEY }).apiBaseUrl).toBe('http://127.0.0.1:9/base');
      expect(new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: 'https://other.example' }).apiBaseUrl).toBe('https://other.example');
    } finally {
      if (previous === undefined) delete process.env.SERVICE_API_BASE_URL;
      else process.env.SERVICE_API_BASE_URL = previous;
    }
  });

  it('the key is absent from JSON.stringify, util.inspect and the own keys of the client', () => {
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: 'http://127.0.0.1:9' });
    expect(JSON.stringify(client)).not.toContain(API_KEY);
    expect(inspect(client, { showHidden: true, depth: 5 })).not.toContain(API_KEY);
    expect(String(client)).not.toContain(API_KEY);
    expect(JSON.stringify(Object.getOwnPropertyNames(client).map((k) => (client as unknown as Record<string, unknown>)[k]))).not.toContain(
      API_KEY,
    );
    expect(JSON.parse(JSON.stringify(client))).toEqual(expect.objectContaining({ apiBaseUrl: 'http://127.0.0.1:9', apiKey: '[redacted]' }));
  });
});
