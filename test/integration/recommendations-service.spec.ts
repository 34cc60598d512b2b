import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { createRecommendationsDataSource, importCatalog, validateCatalog } from '#libs/catalog';
import {
  RECOMMEND_MAX_RESULTS,
  RecommendationEventDto,
  RpcSubjects,
  Streams,
  type RecommendResult,
} from '#libs/contracts';
import type { RecommendRequest } from '#libs/recommend-request';
import { initializeDatabase } from '#libs/database';
import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { NatsRpcClient, ensureStreams, type NatsClient } from '#libs/nats';
import type { RecommendationsEnv } from '../../apps/recommendations/src/config/recommendations.env.js';
import { connectNatsClient, connectSql, startRecommendations, storedEvents, useTestStack, waitFor, type ServiceUnderTest } from '../support/index.js';

/**
 * The recommendations service over a private nats-server and a fresh PostgreSQL database, with
 * the sample catalog imported: ranking, the empty answer, the same answer for the same session
 * and message (also when asked concurrently), the `generated` events on EVENTS, the latency
 * budget, and the outbox that publishes what JetStream refused once it is back.
 */
const GENERATED = 'events.recommendation.generated';

const stack = useTestStack();
let service: ServiceUnderTest<RecommendationsEnv>;
let client: NatsClient;
let rpc: ClientProxy;
let catalog: DataSource;
let sql: pg.Client;
let sequence = 0;

function request(overrides: Partial<RecommendRequest> = {}): RecommendRequest {
  sequence += 1;
  return {
    agent_id: 'agent_rec',
    traffic: 'live',
    session_id: 'sess_1',
    message_id: `msg_${sequence}`,
    query: 'running shoes',
    latency_budget_ms: 5000,
    request_id: `req_${sequence}`,
    ...overrides,
  };
}

const ask = (payload: unknown) => firstValueFrom(rpc.send<RecommendResult>(RpcSubjects.recommend, payload));

const recommend = (overrides: Partial<RecommendRequest> = {}): Promise<RecommendResult> => ask(request(overrides));

const generatedEvents = async () => (await storedEvents(client.manager, Streams.events)).filter((e) => e.subject === GENERATED);

const eventsFor = async (ids: string[]) => (await generatedEvents()).filter((e) => ids.includes(e.payload.recommendation_id as string));

async function count(query: string, params: unknown[] = []): Promise<number> {
  const { rows } = await sql.query(query, params);
  return rows[0].n as number;
}

beforeAll(async () => {
  service = stack.track(await startRecommendations(stack.urls));
  client = await connectNatsClient(stack, 'recommendations-test');
  rpc = new NatsRpcClient({ connection: client.connection, timeoutMs: 15000 });
  catalog = createRecommendationsDataSource(stack.db.url, 2, 'recommendations-test');
  await initializeDatabase(catalog);
  stack.atEnd(() => catalog.destroy());
  const file = validateCatalog(JSON.parse(readFileSync(resolve('catalog/sample-catalog.json'), 'utf8')));
  if (!file.ok) throw new Error(`sample catalog invalid: ${file.problems.join('; ')}`);
  await importCatalog(catalog, file.ads);
  sql = await connectSql(stack);
});

describe('ranking', () => {
  it('ranks a running shoe first for "running shoes", at most 3 ads, scores in 0–100, best first, every field', async () => {
    const sent = request({ query: 'running shoes' });
    const result = await ask(sent);
    const { recommendations } = result;
    expect(result.request_id).toBe(sent.request_id);
    expect(result.query).toBe('running shoes');
    expect(recommendations.length).toBeGreaterThan(0);
    expect(recommendations.length).toBeLessThanOrEqual(RECOMMEND_MAX_RESULTS);
    expect(recommendations[0].product_title).toMatch(/running shoes/i);
    expect(recommendations[0].ad_id).toMatch(/^ad_run_/);
    const scores = recommendations.map((r) => r.contextual_relevance_score);
    for (const score of scores) {
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(100);
    }
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const createdAt = recommendations[0].created_at;
    for (const r of recommendations) {
      expect(r).toEqual({
        recommendation_id: expect.stringMatching(/^rec_[0-9a-f]{24}$/),
        ad_id: expect.any(String),
        product_id: expect.any(String),
        product_title: expect.any(String),
        weave_summary: expect.any(String),
        tail_summary: expect.any(String),
        creative_input: expect.objectContaining({ short_description: expect.any(String) }),
        contextual_relevance_score: expect.any(Number),
        landing_url: expect.stringMatching(/^https:\/\//),
        created_at: createdAt,
      });
      expect(new Date(r.created_at).toISOString()).toBe(r.created_at);
    }
    expect(new Set(recommendations.map((r) => r.recommendation_id)).size).toBe(recommendations.length);
  });

  it.each([
    ['which espresso machine makes good lattes at home?', 'ad_coffee_espresso_07'],
    ['I need travel insurance for my trip to Japan', /^ad_travel_ins_/],
    ['what is the best app to learn Japanese?', /^ad_lang_/],
    ['a gaming laptop with a fast graphics card', 'ad_laptop_gaming_11'],
  ])('finds the relevant ad for %j', async (query, expected) => {
    const { recommendations } = await recommend({ query });
    expect(recommendations[0]?.ad_id).toEqual(typeof expected === 'string' ? expected : expect.stringMatching(expected));
  });

  it('stems with the english configuration: "shoe" finds the ads that say "shoes"', async () => {
    const { recommendations } = await recommend({ query: 'shoe' });
    expect(recommendations.length).toBeGreaterThan(0);
    for (const r of recommendations) expect(r.product_title).toMatch(/shoes/i);
  });

  it('never recommends an inactive ad', async () => {
    const { recommendations } = await recommend({ query: 'StrideLab Classic discontinued running shoes' });
    expect(recommendations.map((r) => r.ad_id)).not.toContain('ad_retired_24');
  });

  it('uses the last user messages as context, with less weight than the query', async () => {
    const messages = [
      { role: 'user', content: 'I start college next month and need a new laptop' },
      { role: 'assistant', content: 'Happy to help. What matters most to you?' },
    ];
    const query = 'which one has the longest battery life?';
    const alone = await recommend({ query });
    const withContext = await recommend({ query, messages });
    // Alone, the question also finds ads that only share a word with it; the history about a
    // laptop turns every recommendation into a laptop, the one with the long battery first.
    expect(alone.recommendations.map((r) => r.ad_id).every((id) => id.startsWith('ad_laptop_'))).toBe(false);
    expect(withContext.recommendations.map((r) => r.ad_id)).toEqual([
      'ad_laptop_ultra_10',
      expect.stringMatching(/^ad_laptop_/),
      expect.stringMatching(/^ad_laptop_/),
    ]);
    // Less weight: the context raises the score of the ad the query itself names, but an ad
    // known only from the context scores below it.
    expect(withContext.recommendations[0].contextual_relevance_score).toBeGreaterThan(alone.recommendations[0].contextual_relevance_score);
    expect(withContext.recommendations[1].contextual_relevance_score).toBeLessThan(withContext.recommendations[0].contextual_relevance_score);
    // The assistant's words are not the user's intent: they alone find nothing.
    const assistantOnly = await recommend({ query: 'xyzzy', messages: [{ role: 'assistant', content: 'laptop espresso running shoes' }] });
    expect(assistantOnly.recommendations).toEqual([]);
  });

  it('answers an empty list for a nonsense query or one of stop words only, and records nothing', async () => {
    const before = await count('SELECT count(*)::int AS n FROM recommendations.recommendation_request');
    for (const query of ['xyzzy plugh frobnicate', 'the of and to', '!!! ???']) {
      expect((await recommend({ query })).recommendations).toEqual([]);
    }
    expect(await count('SELECT count(*)::int AS n FROM recommendations.recommendation_request')).toBe(before);
  });

  it('refuses a malformed request with invalid_request', async () => {
    const valid = request();
    const { query: _query, ...withoutQuery } = valid;
    for (const payload of [withoutQuery, { ...valid, traffic: 'prod' }, { ...valid, extra: 1 }, { ...valid, query: '' }, { ...valid, messages: [{ role: 'user' }] }]) {
      await expect(ask(payload)).rejects.toMatchObject({ code: 'invalid_request', answered: true });
    }
  });
});

describe('the same session and message', () => {
  it('gets the same recommendations (ids, created_at) and only one generated event each', async () => {
    const first = request({ session_id: 'sess_repeat', message_id: 'msg_repeat', query: 'espresso grinder' });
    const a = await recommend(first);
    const b = await recommend({ ...first, request_id: 'req_repeat_2' });
    // The ids name the message: a repeat is answered from the record, whatever its query.
    const c = await recommend({ ...first, request_id: 'req_repeat_3', query: 'gaming laptop' });
    // Another platform, the other traffic, another message: new recommendations.
    const otherAgent = await recommend({ ...first, agent_id: 'agent_other' });
    const otherTraffic = await recommend({ ...first, traffic: 'test' });
    const otherMessage = await recommend({ ...first, message_id: 'msg_repeat_other' });

    expect(a.recommendations.length).toBeGreaterThan(0);
    expect(b.recommendations).toEqual(a.recommendations);
    expect(b.request_id).toBe('req_repeat_2');
    expect(c.recommendations).toEqual(a.recommendations);
    expect(c.query).toBe('gaming laptop');
    const ids = a.recommendations.map((r) => r.recommendation_id);
    for (const other of [otherAgent, otherTraffic, otherMessage]) {
      expect(other.recommendations.map((r) => r.ad_id)).toEqual(a.recommendations.map((r) => r.ad_id));
      for (const r of other.recommendations) expect(ids).not.toContain(r.recommendation_id);
    }

    await waitFor(async () => (await eventsFor(ids)).length >= ids.length, { what: 'generated events' });
    await new Promise((r) => setTimeout(r, 300)); // room for a stray duplicate to show up
    expect(await eventsFor(ids)).toHaveLength(ids.length);
  });

  it('records one answer when identical requests arrive at once', async () => {
    const same = request({ session_id: 'sess_race', message_id: 'msg_race', query: 'travel insurance' });
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => recommend({ ...same, request_id: `req_race_${i}` })));
    const first = replies[0].recommendations;
    expect(first.length).toBeGreaterThan(0);
    for (const reply of replies) expect(reply.recommendations).toEqual(first);
    const stored = await count(
      `SELECT count(*)::int AS n FROM recommendations.recommendation WHERE agent_id = $1 AND session_id = $2 AND message_id = $3`,
      ['agent_rec', 'sess_race', 'msg_race'],
    );
    expect(stored).toBe(first.length);
    const ids = first.map((r) => r.recommendation_id);
    await waitFor(async () => (await eventsFor(ids)).length >= ids.length, { what: 'generated events' });
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsFor(ids)).toHaveLength(ids.length);
  });
});

describe('events.recommendation.generated', () => {
  it('carries the DESIGN §4 payload with Nats-Msg-Id = event_id, and the outbox empties', async () => {
    const { recommendations } = await recommend({ query: 'language learning app', traffic: 'test' });
    expect(recommendations.length).toBeGreaterThan(0);
    const ids = recommendations.map((r) => r.recommendation_id);
    const events = await waitFor(async () => {
      const found = await eventsFor(ids);
      return found.length >= ids.length ? found : undefined;
    });
    for (const r of recommendations) {
      const event = events.find((e) => e.payload.recommendation_id === r.recommendation_id)!;
      expect(event).toEqual({
        msgId: `evt_gen_${r.recommendation_id}`,
        subject: GENERATED,
        payload: {
          event_id: `evt_gen_${r.recommendation_id}`,
          recommendation_id: r.recommendation_id,
          agent_id: 'agent_rec',
          traffic: 'test',
          recommendation_created_at: r.created_at,
          occurred_at: r.created_at,
          billable: false,
          ad_id: r.ad_id,
          product_id: r.product_id,
        },
      });
      // What the reporting projection accepts (it dead-letters anything else).
      expect(validateSync(plainToInstance(RecommendationEventDto, event.payload), { forbidNonWhitelisted: true, whitelist: true })).toEqual([]);
    }
    await waitFor(async () => (await count('SELECT count(*)::int AS n FROM recommendations.outbox')) === 0, { what: 'an empty outbox' });
  });
});

describe('latency budget', () => {
  it('answers unavailable within the budget when the search cannot finish, records nothing, and answers once it can', async () => {
    // A transaction holding an exclusive lock on the catalog: the search waits for it until its
    // statement_timeout (the budget) fires. The lock is released only after the answer came, so
    // a handler that ignored its budget would make this request time out instead.
    const blocker = new pg.Client({ connectionString: stack.db.url });
    await blocker.connect();
    const slow = request({ session_id: 'sess_budget', message_id: 'msg_budget', query: 'coffee beans', latency_budget_ms: 100 });
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE recommendations.ads IN ACCESS EXCLUSIVE MODE');
      // answered: the service said unavailable itself, within the budget (not the client's timeout)
      await expect(ask(slow)).rejects.toMatchObject({ code: 'unavailable', answered: true });
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    expect(await count(`SELECT count(*)::int AS n FROM recommendations.recommendation_request WHERE session_id = 'sess_budget'`)).toBe(0);
    const retried = await recommend({ ...slow, latency_budget_ms: 5000 });
    expect(retried.recommendations[0]?.ad_id).toBe('ad_coffee_beans_09');
  });
});

describe('outbox', () => {
  it('publishes the events JetStream refused once it accepts them again (no event lost)', async () => {
    const failures = async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('weave_recommendations_events_publish_failures_total'));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    const failedBefore = await failures();
    // Without the EVENTS stream, a publish on events.> gets no PubAck (no responders).
    await client.manager.streams.delete(Streams.events);
    const { recommendations } = await recommend({ session_id: 'sess_outbox', query: 'noise cancelling headphones for flights' });
    expect(recommendations.length).toBeGreaterThan(0);
    const ids = recommendations.map((r) => r.recommendation_id);
    await waitFor(async () => (await failures()) >= failedBefore + ids.length, { what: 'the failed publishes' });
    expect(await count(`SELECT count(*)::int AS n FROM recommendations.outbox WHERE payload->>'recommendation_id' = ANY($1)`, [ids])).toBe(ids.length);

    await ensureStreams(client.manager);
    const events = await waitFor(
      async () => {
        const found = await eventsFor(ids);
        return found.length >= ids.length ? found : undefined;
      },
      { timeoutMs: 30000, what: 'the swept events' },
    );
    expect(events.map((e) => e.msgId).sort()).toEqual(ids.map((id) => `evt_gen_${id}`).sort());
    await waitFor(async () => (await count('SELECT count(*)::int AS n FROM recommendations.outbox')) === 0, { what: 'an empty outbox' });
  });
});

describe('operations', () => {
  it('is ready when NATS, PostgreSQL and Redis answer, and exposes its metrics', async () => {
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toMatch(/weave_recommendations_answers_total\{[^}]*outcome="found"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/weave_recommendations_answers_total\{[^}]*outcome="replayed"[^}]*\} [1-9]/);
  });
});
