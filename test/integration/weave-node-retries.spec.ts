// @vendor/weave-node retries, backoff, Retry-After, abort and per-attempt timeouts, against real
// local HTTP servers (node:http) that fail on purpose: 5xx then success, 429 with Retry-After,
// connection resets, answers that never come. What the servers record (arrival order, arrival
// times, connections the client closed) is what is asserted; time is only ever asserted as a
// lower bound (a retry cannot arrive before its backoff), never as a tight window. The BUILT
// package (libs/weave-node/dist) is what runs here.
import * as http from 'node:http';
import { expectNotInError, json, loadBuiltWeaveNode, rejection, useRecordingServers, type Arrival, type WeaveNode } from '../support/index.js';

type RequestError = InstanceType<WeaveNode['ServiceRequestError']>;
type ConnectionError = InstanceType<WeaveNode['ServiceConnectionError']>;

const API_KEY = 'sk_live_RetrySecretKey_9876543210';
const OPTIONS = { sessionId: 'sess-retry', messageId: 'msg-1', query: 'waterproof hiking boots' };

// First backoff is 0.5 s minus at most 25 % jitter, then it doubles. Lower bounds only, with a
// few milliseconds of slack for timer and clock granularity.
const SLACK_MS = 25;
const minBackoffMs = (retry: number): number => 500 * 2 ** (retry - 1) * 0.75 - SLACK_MS;

const RECOMMENDATION = {
  recommendation_id: 'rec_r1',
  ad_id: 'ad_r1',
  product_id: 'prod_r1',
  product_title: 'Summit GTX Boot',
  click_url: 'https://gw.example/t/c/x',
  exposure_url: 'https://gw.example/t/e/x',
  creative_input: { short_description: 'Waterproof hiking boot' },
  contextual_relevance_score: 71,
};

let lib: WeaveNode;
const server = useRecordingServers();

function problem(res: http.ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ type: 'about:blank', title: http.STATUS_CODES[status], status, detail }));
}

const found = (res: http.ServerResponse): void => json(res, 200, { request_id: 'req_ok', query: OPTIONS.query, recommendations: [RECOMMENDATION] });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function gaps(seen: Arrival[]): number[] {
  return seen.slice(1).map((arrival, index) => arrival.at - seen[index].at);
}

const expectNoKey = (error: Error): void => expectNotInError(error, API_KEY);

beforeAll(async () => {
  lib = await loadBuiltWeaveNode();
}, 120000);

describe('@vendor/weave-node retries and backoff (built package, real HTTP servers)', () => {
  it('a flaky server (503 then 200): one retry after the backoff, same request and Idempotency-Key, found', async () => {
    const s = await server((_req, res, attempt) => (attempt === 1 ? problem(res, 503, 'Recommendations temporarily unavailable.') : found(res)));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result).toEqual({ found: true, recommendations: [RECOMMENDATION], query: OPTIONS.query, requestId: 'req_ok' });
    expect(s.seen).toHaveLength(2);
    expect(s.seen.map((a) => a.headers['x-retry-count'])).toEqual(['0', '1']);
    expect(s.seen[1].headers['idempotency-key']).toBe(s.seen[0].headers['idempotency-key']);
    expect(s.seen[1].headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(s.seen[1].body).toBe(s.seen[0].body);
    expect(gaps(s.seen)[0]).toBeGreaterThanOrEqual(minBackoffMs(1));
  });

  it('408, 409 and 502 are each retried, with a backoff that doubles (0.5 s, 1 s, 2 s minus jitter)', async () => {
    const statuses = [408, 409, 502];
    const s = await server((_req, res, attempt) => (attempt <= statuses.length ? problem(res, statuses[attempt - 1], 'try again') : found(res)));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result.found).toBe(true);
    expect(s.seen).toHaveLength(4);
    expect(s.seen.map((a) => a.headers['x-retry-count'])).toEqual(['0', '1', '2', '3']);
    gaps(s.seen).forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(minBackoffMs(index + 1)));
  }, 30000);

  it('5xx every time: the default of 2 retries (3 requests), then ServiceRequestError with the problem detail', async () => {
    const s = await server((_req, res) => problem(res, 503, 'The recommendation service did not answer in time.', { 'x-request-id': 'req_503' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as RequestError;
    expect(error).toBeInstanceOf(lib.ServiceRequestError);
    expect(error.status).toBe(503);
    expect(error.message).toBe('The recommendation service did not answer in time.');
    expect(error.requestId).toBe('req_503');
    expect(s.seen).toHaveLength(3);
    expectNoKey(error);
  });

  it('maxRetries per call overrides the client: 0 makes exactly one request', async () => {
    const s = await server((_req, res) => problem(res, 500, 'boom'));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 5 });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS, { maxRetries: 0 }))) as RequestError;
    expect(error.status).toBe(500);
    await sleep(800); // longer than any first backoff
    expect(s.seen).toHaveLength(1);
  });

  it('429 with Retry-After: 1 → the retry arrives no sooner than 1 s later, then found', async () => {
    const s = await server((_req, res, attempt) => (attempt === 1 ? problem(res, 429, 'Slow down.', { 'retry-after': '1' }) : found(res)));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result.found).toBe(true);
    expect(s.seen).toHaveLength(2);
    expect(gaps(s.seen)[0]).toBeGreaterThanOrEqual(1000 - SLACK_MS);
  });

  it('429 with Retry-After as an HTTP date → the retry arrives no sooner than that date', async () => {
    let retryAt = 0;
    const s = await server((_req, res, attempt) => {
      if (attempt > 1) return found(res);
      retryAt = (Math.floor(Date.now() / 1000) + 2) * 1000; // HTTP dates have whole seconds
      problem(res, 429, 'Slow down.', { 'retry-after': new Date(retryAt).toUTCString() });
    });
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    expect((await client.getRecommendationsForWeave(OPTIONS)).found).toBe(true);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1].at).toBeGreaterThanOrEqual(retryAt - SLACK_MS);
  });

  it('429 asking for more than 60 s: not honoured (normal backoff instead); still 429 → ServiceRateLimitError with retryAfterMs', async () => {
    const s = await server((_req, res) => problem(res, 429, 'Quota exhausted for this minute.', { 'retry-after': '120' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 1 });
    // Completing inside this test's 20 s timeout proves the client did not wait 60 s or 120 s.
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as RequestError;
    expect(error).toBeInstanceOf(lib.ServiceRateLimitError);
    expect(error).toBeInstanceOf(lib.ServiceRequestError);
    expect(error.status).toBe(429);
    expect(error.retryAfterMs).toBe(120000);
    expect(error.message).toBe('Quota exhausted for this minute.');
    expect(s.seen).toHaveLength(2);
    expect(gaps(s.seen)[0]).toBeGreaterThanOrEqual(minBackoffMs(1));
  }, 20000);

  it('a server that resets every connection: retried, then ServiceConnectionError (not a timeout), key absent', async () => {
    const s = await server((req) => req.socket.destroy());
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 2 });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as ConnectionError;
    expect(error).toBeInstanceOf(lib.ServiceConnectionError);
    expect(error.timedOut).toBe(false);
    expect(error.message).toContain(s.url);
    expect(error.message).toContain('3 attempt(s)');
    expect(s.seen).toHaveLength(3);
    gaps(s.seen).forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(minBackoffMs(index + 1)));
    expectNoKey(error);
  });

  it('a reset before any answer and a reset in the middle of an answer are both retried; then found', async () => {
    const s = await server((req, res, attempt) => {
      if (attempt === 1) return req.socket.destroy();
      if (attempt === 2) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"request_id":"half","recommendations":[');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      found(res);
    });
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url });
    const result = await client.getRecommendationsForWeave(OPTIONS);
    expect(result).toEqual(expect.objectContaining({ found: true, requestId: 'req_ok' }));
    expect(s.seen).toHaveLength(3);
  });

  it('a server that is not listening at all: retried, then ServiceConnectionError', async () => {
    const s = await server(() => undefined);
    await s.close(); // the port is now closed: ECONNREFUSED
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 1 });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as ConnectionError;
    expect(error).toBeInstanceOf(lib.ServiceConnectionError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('2 attempt(s)');
  });

  it('400, 401, 403, 404 and 422 are never retried: exactly one request each', async () => {
    const cases = [
      { status: 400, type: lib.ServiceRequestError, detail: 'Malformed JSON body.' },
      { status: 401, type: lib.ServiceAuthenticationError, detail: 'Send the platform API key as "Authorization: Bearer <API_KEY>".' },
      { status: 403, type: lib.ServiceAuthenticationError, detail: 'The platform account is suspended.' },
      { status: 404, type: lib.ServiceRequestError, detail: 'No such route.' },
      { status: 422, type: lib.ServiceRequestError, detail: 'query must be a non-empty string.' },
    ];
    const started = await Promise.all(cases.map((c) => server((_req, res) => problem(res, c.status, c.detail, { 'retry-after': '0' }))));
    const errors = await Promise.all(
      started.map((s) => rejection(new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 }).getRecommendationsForWeave(OPTIONS))),
    );
    await sleep(1000); // twice the first backoff: a retry would have arrived
    cases.forEach((c, index) => {
      const error = errors[index] as RequestError;
      expect(error).toBeInstanceOf(c.type);
      expect(error.status).toBe(c.status);
      expect(error.message).toBe(c.detail);
      expect(started[index].seen).toHaveLength(1);
      expectNoKey(error);
    });
    expect(errors[0]).not.toBeInstanceOf(lib.ServiceAuthenticationError);
    expect(errors[4]).not.toBeInstanceOf(lib.ServiceAuthenticationError);
  });
});

describe('@vendor/weave-node abort and per-attempt timeout (built package, real HTTP servers)', () => {
  it('abort during a request: ServiceAbortError, the connection is closed, and no further request arrives', async () => {
    const s = await server(() => undefined); // holds every request open
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const controller = new AbortController();
    const pending = client.getRecommendationsForWeave(OPTIONS, { signal: controller.signal });
    await until(() => s.seen.length === 1, 'the first request');
    controller.abort();
    const error = await rejection(pending);
    expect(error).toBeInstanceOf(lib.ServiceAbortError);
    expect(error).toBeInstanceOf(lib.ServiceError);
    await until(() => s.seen[0].closedByClient, 'the client to close the aborted connection');
    await sleep(1200); // longer than the first backoff (≤ 0.5 s): a retry would have arrived
    expect(s.seen).toHaveLength(1);
  });

  it('abort during the backoff: ServiceAbortError, and the retry never arrives', async () => {
    const s = await server((_req, res) => problem(res, 503, 'busy', { 'retry-after': '1' }));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const controller = new AbortController();
    let settled = false;
    const pending = client.getRecommendationsForWeave(OPTIONS, { signal: controller.signal }).finally(() => {
      settled = true;
    });
    await until(() => s.seen.length === 1, 'the first request');
    await sleep(300); // the 503 has been read: the client now waits its 1 s Retry-After
    expect(settled).toBe(false);
    controller.abort();
    expect(await rejection(pending)).toBeInstanceOf(lib.ServiceAbortError);
    await until(() => Date.now() >= s.seen[0].at + 1600, 'the end of the Retry-After window');
    expect(s.seen).toHaveLength(1);
  });

  it('abort during the second attempt: two requests and no third', async () => {
    const s = await server((_req, res, attempt) => (attempt === 1 ? problem(res, 500, 'boom') : undefined));
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, maxRetries: 3 });
    const controller = new AbortController();
    const pending = client.getRecommendationsForWeave(OPTIONS, { signal: controller.signal });
    await until(() => s.seen.length === 2, 'the retry');
    controller.abort();
    expect(await rejection(pending)).toBeInstanceOf(lib.ServiceAbortError);
    await until(() => s.seen[1].closedByClient, 'the client to close the aborted connection');
    await sleep(1500); // longer than the second backoff (≤ 1 s)
    expect(s.seen).toHaveLength(2);
  });

  it('an attempt that outlives timeoutMs is closed by the client and retried; after the retries a timed-out ServiceConnectionError', async () => {
    const s = await server(() => undefined); // never answers
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url, timeoutMs: 300, maxRetries: 1 });
    const error = (await rejection(client.getRecommendationsForWeave(OPTIONS))) as ConnectionError;
    expect(error).toBeInstanceOf(lib.ServiceConnectionError);
    expect(error.timedOut).toBe(true);
    expect(error.message).toContain('timed out after 300 ms');
    expect(s.seen).toHaveLength(2);
    await until(() => s.seen.every((a) => a.closedByClient), 'the client to close both timed-out connections');
    // Each attempt had its own timeout: the retry came after the first attempt's 300 ms plus a backoff.
    expect(gaps(s.seen)[0]).toBeGreaterThanOrEqual(300 + minBackoffMs(1));
    expectNoKey(error);
  });

  it('the timeout covers the whole answer (a body that stops coming) and a per-call timeoutMs overrides the client', async () => {
    const s = await server((_req, res, attempt) => {
      if (attempt > 1) return found(res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"request_id":"slow","recommendations":['); // and never the rest
    });
    const client = new lib.ServiceClient({ apiKey: API_KEY, apiBaseUrl: s.url }); // 30 s per attempt by default
    const result = await client.getRecommendationsForWeave(OPTIONS, { timeoutMs: 400 });
    expect(result).toEqual(expect.objectContaining({ found: true, requestId: 'req_ok' }));
    expect(s.seen).toHaveLength(2);
    expect(s.seen[0].closedByClient).toBe(true);
  });
});
