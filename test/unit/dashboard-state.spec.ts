import { classifyResponse, problemMessage, retryAfterSeconds } from '../../apps/dashboard/src/api/outcome.js';
import { sessionTimers } from '../../apps/dashboard/src/auth/claims.js';
import { initialResourceState, preparingRetryDelayMs, resourceReducer, visibleData, type ResourceState } from '../../apps/dashboard/src/state/resource-state.js';

const problem = (status: number, detail: string) => ({ type: 'https://weave.example/problems/x', title: 'T', status, detail });

describe('classifyResponse: what an API answer means for a page', () => {
  it('2xx is data, 204 included', () => {
    expect(classifyResponse(200, null, { a: 1 })).toEqual({ kind: 'ok', status: 200, data: { a: 1 } });
    expect(classifyResponse(201, null, { key_id: 'k' })).toEqual({ kind: 'ok', status: 201, data: { key_id: 'k' } });
    expect(classifyResponse(204, null, undefined)).toEqual({ kind: 'ok', status: 204, data: undefined });
  });

  it('202 is "being prepared", with the server Retry-After (60 s when missing or not seconds)', () => {
    expect(classifyResponse(202, '60', { status: 'preparing' })).toEqual({ kind: 'preparing', retryAfterSeconds: 60 });
    expect(classifyResponse(202, ' 5 ', {})).toEqual({ kind: 'preparing', retryAfterSeconds: 5 });
    expect(retryAfterSeconds(null)).toBe(60);
    expect(retryAfterSeconds('Wed, 21 Oct 2026 07:28:00 GMT')).toBe(60);
    expect(retryAfterSeconds('-3')).toBe(60);
  });

  it('401 signs out, 502/503/504 say "try again", the rest carry the API explanation', () => {
    expect(classifyResponse(401, null, problem(401, 'expired'))).toMatchObject({ kind: 'unauthorized' });
    for (const status of [502, 503, 504]) expect(classifyResponse(status, null, problem(status, 'busy'))).toMatchObject({ kind: 'unavailable' });
    expect(classifyResponse(409, null, problem(409, 'Already 20 unrevoked keys.'))).toEqual({
      kind: 'problem',
      status: 409,
      problem: { type: 'https://weave.example/problems/x', title: 'T', status: 409, detail: 'Already 20 unrevoked keys.' },
    });
    expect(classifyResponse(500, null, 'not json')).toEqual({ kind: 'problem', status: 500, problem: { status: 500 } });
  });

  it('words a problem by its detail, else title, else status', () => {
    expect(problemMessage({ detail: 'D', title: 'T', status: 422 })).toBe('D');
    expect(problemMessage({ title: 'T', status: 422 })).toBe('T');
    expect(problemMessage({ status: 418 }, 'Failed.')).toBe('Failed. (HTTP 418)');
  });
});

describe('preparing: the page retries a 202 by itself', () => {
  it('backs off 5 s, 10 s, 20 s, 40 s, then waits the Retry-After', () => {
    expect([0, 1, 2, 3, 4, 5, 30].map((attempt) => preparingRetryDelayMs(attempt, 60))).toEqual([5000, 10000, 20000, 40000, 60000, 60000, 60000]);
  });

  it('never waits longer than the server asks, nor less than a second', () => {
    expect(preparingRetryDelayMs(0, 3)).toBe(3000);
    expect(preparingRetryDelayMs(0, 0)).toBe(1000);
  });
});

describe('resourceReducer: the phases of a page', () => {
  type Data = { n: number };
  const run = (events: Parameters<typeof resourceReducer<Data>>[1][]): ResourceState<Data> =>
    events.reduce((state, event) => resourceReducer(state, event), initialResourceState<Data>());

  it('loads, shows, and keeps the old data visible while reloading', () => {
    const ready = run([{ type: 'load' }, { type: 'outcome', outcome: { kind: 'ok', status: 200, data: { n: 1 } } }]);
    expect(ready).toEqual({ phase: 'ready', data: { n: 1 } });
    const reloading = resourceReducer(ready, { type: 'load' });
    expect(reloading).toEqual({ phase: 'loading', previous: { n: 1 } });
    expect(visibleData(reloading)).toEqual({ n: 1 });
  });

  it('a fresh load (another range, traffic or page) forgets the old data', () => {
    const ready: ResourceState<Data> = { phase: 'ready', data: { n: 1 } };
    expect(resourceReducer(ready, { type: 'load', fresh: true })).toEqual({ phase: 'loading' });
    expect(visibleData(resourceReducer(ready, { type: 'load', fresh: true }))).toBeUndefined();
  });

  it('counts retries while a scope is prepared, and shows data once it is ready', () => {
    const preparing = { type: 'outcome', outcome: { kind: 'preparing', retryAfterSeconds: 60 } } as const;
    const first = run([{ type: 'load' }, preparing]);
    expect(first).toEqual({ phase: 'preparing', attempt: 0, retryInMs: 5000 });
    const second = run([{ type: 'load' }, preparing, { type: 'load' }, preparing]);
    expect(second).toEqual({ phase: 'preparing', attempt: 1, retryInMs: 10000 });
    expect(resourceReducer(second, { type: 'load' })).toBe(second); // still "being prepared" while it asks again
    expect(resourceReducer(second, { type: 'outcome', outcome: { kind: 'ok', status: 200, data: { n: 2 } } })).toEqual({ phase: 'ready', data: { n: 2 } });
  });

  it('503 and network failures offer a retry; 401 leaves the page to the sign-in; other problems explain', () => {
    expect(run([{ type: 'outcome', outcome: { kind: 'unavailable', problem: problem(503, 'Reporting did not answer in time.') } }])).toEqual({
      phase: 'unavailable',
      message: 'Reporting did not answer in time.',
    });
    expect(run([{ type: 'outcome', outcome: { kind: 'network', message: 'Failed to fetch' } }])).toMatchObject({ phase: 'unavailable', message: expect.stringContaining('Failed to fetch') });
    expect(run([{ type: 'outcome', outcome: { kind: 'unauthorized', problem: problem(401, 'x') } }])).toEqual({ phase: 'signed-out' });
    expect(run([{ type: 'outcome', outcome: { kind: 'problem', status: 404, problem: problem(404, 'No such statement.') } }])).toEqual({
      phase: 'error',
      status: 404,
      message: 'No such statement.',
    });
  });
});

describe('session: renewal', () => {
  it('renews a minute before the earlier expiry and ends at the ID token exp', () => {
    expect(sessionTimers(10_000, 10_000)).toEqual({ renewAt: 10_000_000 - 60_000, expireAt: 10_000_000 });
    expect(sessionTimers(10_000, 9_000)).toEqual({ renewAt: 9_000_000 - 60_000, expireAt: 10_000_000 });
    expect(sessionTimers(10_000, undefined)).toEqual({ renewAt: 10_000_000 - 60_000, expireAt: 10_000_000 });
  });
});
