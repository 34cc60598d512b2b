// @vendor/weave-node against real local HTTP servers. The BUILT package (libs/weave-node/dist)
// is what runs here: it is built before the tests when missing or older than its sources.
import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';

// The types come from the library's entry source; the values from the built ESM file.
type WeaveNode = typeof import('../../libs/weave-node/src/index.js');

const ROOT = process.cwd();
const LIB = join(ROOT, 'libs', 'weave-node');
const API_KEY = 'sk_test_SuperSecretKey_0123456789';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

interface TestServer {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, attempt: number, body: string) => void;

async function startServer(handler: Handler): Promise<TestServer> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method || '', url: req.url || '', headers: req.headers, body, at: Date.now() });
      handler(req, res, seen.length, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
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
const servers: TestServer[] = [];

async function server(handler: Handler): Promise<TestServer> {
  const started = await startServer(handler);
  servers.push(started);
  return started;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  execFileSync(process.execPath, [join(LIB, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
  lib = (await import(pathToFileURL(join(LIB, 'dist', 'esm', 'index.mjs')).href)) as WeaveNode;
}, 120000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('@vendor/weave-node ServiceClient (built package, real HTTP server)', () => {
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
    expect(result.recommendations).toBeUndefined();
    expect(result.requestId).toBe('req_7');
    expect(s.seen).toHaveLength(1);
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

  it('401 → ServiceAuthenticationError, not retried, key absent from the message', async () => {
    // A careless server echoing the credential must not make the key leak through the error.
    const s = await server((req, res) => json(res, 401, { error: { code: 'invalid_api_key', message: `bad key ${req.headers.authorization}` } }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const error = await rejection(client.getRecommendationsForWeave(OPTIONS));
    expect(error).toBeInstanceOf(lib.ServiceAuthenticationError);
    expect(error).toBeInstanceOf(lib.ServiceError);
    expect((error as InstanceType<WeaveNode['ServiceAuthenticationError']>).status).toBe(401);
    expect((error as InstanceType<WeaveNode['ServiceAuthenticationError']>).code).toBe('invalid_api_key');
    expect(s.seen).toHaveLength(1);
    for (const text of [error.message, String(error), error.stack || '', inspect(error), JSON.stringify(error)]) {
      expect(text).not.toContain(API_KEY);
    }
  });

  it('403 → ServiceAuthenticationError, not retried', async () => {
    const s = await server((_req, res) => json(res, 403, { error: 'account unavailable' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const error = await rejection(client.getRecommendationsForWeave(OPTIONS));
    expect(error).toBeInstanceOf(lib.ServiceAuthenticationError);
    expect(s.seen).toHaveLength(1);
  });

  it.each([400, 404, 422])('%i → ServiceRequestError with the status, never retried', async (status) => {
    const s = await server((_req, res) => json(res, status, { error: { message: 'nope' } }, { 'x-request-id': 'req_bad' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const error = await rejection(client.getRecommendationsForWeave(OPTIONS));
    expect(error).toBeInstanceOf(lib.ServiceRequestError);
    expect(error).not.toBeInstanceOf(lib.ServiceAuthenticationError);
    expect((error as InstanceType<WeaveNode['ServiceRequestError']>).status).toBe(status);
    expect((error as InstanceType<WeaveNode['ServiceRequestError']>).requestId).toBe('req_bad');
    expect(s.seen).toHaveLength(1);
  });

  it('500 then 200: retried once after a backoff, same Idempotency-Key', async () => {
    const s = await server((_req, res, attempt) =>
      attempt === 1 ? json(res, 500, { error: 'boom' }) : json(res, 200, { recommendations: [RECOMMENDATION], request_id: 'req_ok' }),
    );
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result.found).toBe(true);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1].headers['idempotency-key']).toBe(s.seen[0].headers['idempotency-key']);
    // A backoff happened (0.5 s minus at most 25 % jitter); the exact value is not asserted.
    expect(s.seen[1].at - s.seen[0].at).toBeGreaterThanOrEqual(300);
  });

  it('5xx every time: 1 + maxRetries attempts, then ServiceRequestError with the status', async () => {
    const s = await server((_req, res) => json(res, 503, { error: 'unavailable' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 2 });
    const error = await rejection(client.getRecommendationsForWeave(OPTIONS));
    expect(error).toBeInstanceOf(lib.ServiceRequestError);
    expect((error as InstanceType<WeaveNode['ServiceRequestError']>).status).toBe(503);
    expect(s.seen).toHaveLength(3);
  });

  it('429 with Retry-After: 1 is honoured, then succeeds', async () => {
    const s = await server((_req, res, attempt) =>
      attempt === 1 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { recommendations: [], request_id: 'r' }),
    );
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result.found).toBe(false);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1].at - s.seen[0].at).toBeGreaterThanOrEqual(900);
  });

  it('a server that resets connections: retried, then ServiceConnectionError', async () => {
    const s = await server((req) => req.socket.destroy());
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 2 });
    const error = await rejection(client.getRecommendationsForWeave(OPTIONS));
    expect(error).toBeInstanceOf(lib.ServiceConnectionError);
    expect(s.seen).toHaveLength(3);
    expect(error.message).not.toContain(API_KEY);
  });

  it('an attempt that outlives timeoutMs is a timed-out ServiceConnectionError after the retries', async () => {
    const s = await server(() => undefined); // never answers
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, timeoutMs: 200, maxRetries: 1 });
    const error = await rejection(client.getRecommendationsForWeave(OPTIONS));
    expect(error).toBeInstanceOf(lib.ServiceConnectionError);
    expect((error as InstanceType<WeaveNode['ServiceConnectionError']>).timedOut).toBe(true);
    expect(s.seen).toHaveLength(2);
  });

  it('abort mid-request → ServiceAbortError and no further attempt', async () => {
    const s = await server(() => undefined); // holds the request open
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const controller = new AbortController();
    const pending = client.getRecommendationsForWeave(OPTIONS, { signal: controller.signal });
    while (s.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    const error = await rejection(pending);
    expect(error).toBeInstanceOf(lib.ServiceAbortError);
    await new Promise((resolve) => setTimeout(resolve, 1200)); // longer than the first backoff
    expect(s.seen).toHaveLength(1);
  });

  it('abort during the backoff → ServiceAbortError and no further attempt', async () => {
    const s = await server((_req, res) => json(res, 500, { error: 'boom' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const controller = new AbortController();
    const pending = client.getRecommendationsForWeave(OPTIONS, { signal: controller.signal });
    while (s.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    expect(await rejection(pending)).toBeInstanceOf(lib.ServiceAbortError);
    await new Promise((resolve) => setTimeout(resolve, 1200));
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
    expect(s.seen).toHaveLength(0);
  });

  it('constructor: apiKey required, base URL from option, SERVICE_API_BASE_URL, else production', () => {
    for (const apiKey of [undefined, '', '   ']) {
      expect(() => new lib.ServiceClient({ apiKey } as unknown as ConstructorParameters<WeaveNode['ServiceClient']>[0])).toThrow(
        lib.ServiceConfigurationError,
      );
    }
    expect(() => new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: 'ftp://x' })).toThrow(lib.ServiceConfigurationError);
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
