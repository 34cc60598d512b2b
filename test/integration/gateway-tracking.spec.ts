import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { DataSource } from 'typeorm';
import { loadEnv } from '#libs/config';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import {
  QueueGroups,
  RecommendationEventDto,
  RpcSubjects,
  Streams,
  type RankedRecommendation,
  type RecommendRequest,
} from '#libs/contracts';
import { STREAM_CONFIGS } from '#libs/nats';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { createGatewayApp } from '../../apps/gateway/src/gateway.app.js';
import { signTrackingToken, type SignedTrackingClaims } from '../../apps/gateway/src/tracking/tracking-token.js';
import { REDIS_URL, newTestDatabase, startNats, testLogger, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * GET /track/exposure and /track/click over real HTTP with this file's private nats-server:
 * a valid token publishes exactly one DESIGN §4 event to the EVENTS stream (PubAck awaited);
 * every forged, altered or foreign token answers 404 and publishes nothing. The URLs come from
 * POST /agent/recommend in front of a stand-in recommendations service (a real NATS subscriber).
 */

const SECRET = 'gateway-tracking-test-secret-current-0001';
const PREVIOUS_SECRET = 'gateway-tracking-test-secret-previous-0002';
const OTHER_SECRET = 'gateway-tracking-test-secret-unknown-0003';
const CREATED_AT = '2026-11-25T10:15:42.120Z';
const LANDING = 'https://shop.example/trail-runner-2?utm_source=weave&x=1';

let nats: TestNats;
let db: TestDatabase;
let gateway: NestFastifyApplication;
let dataSource: DataSource;
let base: string;
let responder: NatsConnection;
let jsm: JetStreamManager;
let liveKey: string;
let testKey: string;

function ranked(id: string): RankedRecommendation {
  return {
    recommendation_id: id,
    ad_id: `ad_${id}`,
    product_id: `prod_${id}`,
    product_title: `Product ${id}`,
    creative_input: { short_description: `Short ${id}` },
    contextual_relevance_score: 75,
    landing_url: LANDING,
    created_at: CREATED_AT,
  };
}

beforeAll(async () => {
  nats = await startNats();
  db = newTestDatabase();
  // No PUBLIC_BASE_URL: the links point at the address the gateway listens on.
  const env = loadEnv(GatewayEnv, {
    NATS_URL: nats.url,
    DATABASE_URL: db.url,
    REDIS_URL,
    LOG_LEVEL: 'warn',
    TRACKING_SIGNING_SECRET: SECRET,
    TRACKING_SIGNING_SECRET_PREVIOUS: PREVIOUS_SECRET,
  });
  gateway = await createGatewayApp(env, testLogger('gateway'));
  await gateway.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(gateway.getHttpServer().address() as { port: number }).port}`;
  dataSource = createIdentityDataSource(db.url, 2, 'gateway-tracking-test');
  await dataSource.initialize();
  const identity = new IdentityRepository(dataSource);
  await identity.createPlatform('agent_track');
  liveKey = (await identity.createKey('agent_track', 'live')).api_key;
  testKey = (await identity.createKey('agent_track', 'test')).api_key;

  responder = await connect({ servers: nats.url });
  responder.subscribe(RpcSubjects.recommend, {
    queue: QueueGroups.recommendations,
    callback: (_error, msg) => {
      const request = JSON.parse(new TextDecoder().decode(msg.data)) as RecommendRequest;
      // One recommendation per message: its id follows the message id, as the real service's ids follow (session, message).
      const reply = { ok: true, result: { request_id: request.request_id, query: request.query, recommendations: [ranked(`rec_${request.message_id}`)] } };
      msg.respond(new TextEncoder().encode(JSON.stringify(reply)));
    },
  });
  await responder.flush();
  jsm = await jetstreamManager(responder);
});

afterAll(async () => {
  await gateway?.close();
  await responder?.close();
  if (dataSource?.isInitialized) await dataSource.destroy();
  await nats?.stop();
  await db?.drop();
});

interface Links {
  exposure_url: string;
  click_url: string;
  recommendation_id: string;
}

async function links(messageId: string, key = liveKey): Promise<Links> {
  const response = await fetch(`${base}/agent/recommend`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ session_id: 'sess_track', message_id: messageId, query: 'trail running shoes' }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { recommendations: Links[] };
  expect(body.recommendations).toHaveLength(1);
  return body.recommendations[0];
}

const tokenOf = (url: string) => new URL(url).searchParams.get('t')!;
const exposure = (token: string) => fetch(`${base}/track/exposure?t=${encodeURIComponent(token)}`);
const click = (token: string) => fetch(`${base}/track/click?t=${encodeURIComponent(token)}`, { redirect: 'manual' });

async function streamMessages(): Promise<number> {
  return (await jsm.streams.info(Streams.events)).state.messages;
}

async function lastEvent(kind: 'shown' | 'clicked'): Promise<{ payload: Record<string, unknown>; msgId: string | undefined }> {
  const message = await jsm.streams.getMessage(Streams.events, { last_by_subj: `events.recommendation.${kind}` });
  return { payload: message!.json<Record<string, unknown>>(), msgId: message!.header?.get('Nats-Msg-Id') };
}

function claimsOf(token: string): SignedTrackingClaims {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8')) as SignedTrackingClaims;
}

/** Passes the DTO that reporting-projection validates events with (DESIGN §4). */
function expectDesignEvent(payload: Record<string, unknown>): void {
  expect(validateSync(plainToInstance(RecommendationEventDto, payload), { whitelist: true, forbidNonWhitelisted: true })).toEqual([]);
}

async function expectNotFound(response: Response): Promise<void> {
  expect(response.status).toBe(404);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.headers.get('location')).toBeNull();
  expect(await response.json()).toMatchObject({ type: 'https://docs.weave.example/problems/not-found', status: 404 });
}

describe('valid tokens', () => {
  it('signs links for the address the gateway listens on, with the current secret', async () => {
    const { exposure_url, click_url } = await links('msg_sign');
    expect(exposure_url.startsWith(`${base}/track/exposure?t=`)).toBe(true);
    expect(click_url.startsWith(`${base}/track/click?t=`)).toBe(true);
    const [payload, signature] = tokenOf(exposure_url).split('.');
    expect(signature).toBe(createHmac('sha256', SECRET).update(payload).digest('base64url'));
  });

  it('exposure: 204, then exactly one shown event with the DESIGN payload and Nats-Msg-Id; a repeat adds nothing', async () => {
    const { exposure_url, recommendation_id } = await links('msg_exposure');
    const before = await streamMessages();
    const response = await fetch(exposure_url);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await streamMessages()).toBe(before + 1);

    const { payload, msgId } = await lastEvent('shown');
    expect(payload).toEqual({
      event_id: `evt_shown_${recommendation_id}`,
      recommendation_id,
      agent_id: 'agent_track',
      traffic: 'live',
      recommendation_created_at: CREATED_AT,
      occurred_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      billable: false,
      ad_id: `ad_${recommendation_id}`,
      product_id: `prod_${recommendation_id}`,
    });
    expect(msgId).toBe(payload.event_id);
    expectDesignEvent(payload);

    // The same exposure again (a reload): accepted, deduplicated by its event id.
    expect((await fetch(exposure_url)).status).toBe(204);
    expect(await streamMessages()).toBe(before + 1);
  });

  it('click: 302 to the signed landing URL, then one billable clicked event', async () => {
    const { click_url, recommendation_id } = await links('msg_click');
    const before = await streamMessages();
    const response = await fetch(click_url, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(LANDING);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await streamMessages()).toBe(before + 1);

    const { payload, msgId } = await lastEvent('clicked');
    expect(payload).toMatchObject({
      event_id: `evt_clicked_${recommendation_id}`,
      recommendation_id,
      agent_id: 'agent_track',
      traffic: 'live',
      recommendation_created_at: CREATED_AT,
      billable: true,
      ad_id: `ad_${recommendation_id}`,
      product_id: `prod_${recommendation_id}`,
    });
    expect(msgId).toBe(payload.event_id);
    expectDesignEvent(payload);
  });

  it('carries test traffic for links made with a test key', async () => {
    const { exposure_url } = await links('msg_test_traffic', testKey);
    expect((await fetch(exposure_url)).status).toBe(204);
    expect((await lastEvent('shown')).payload).toMatchObject({ traffic: 'test', agent_id: 'agent_track' });
  });

  it('accepts a token signed with TRACKING_SIGNING_SECRET_PREVIOUS (rotation grace)', async () => {
    const { exposure_url } = await links('msg_rotation');
    const claims = { ...claimsOf(tokenOf(exposure_url)), recommendation_id: 'rec_signed_before_rotation' };
    const before = await streamMessages();
    expect((await exposure(signTrackingToken(claims, PREVIOUS_SECRET))).status).toBe(204);
    expect(await streamMessages()).toBe(before + 1);
    expect((await lastEvent('shown')).payload.recommendation_id).toBe('rec_signed_before_rotation');
  });
});

describe('forged, altered and foreign tokens: 404 and no event', () => {
  let valid: Links;
  let stored: number;

  beforeAll(async () => {
    valid = await links('msg_forgery');
  });
  beforeEach(async () => {
    stored = await streamMessages();
  });
  afterEach(async () => {
    expect(await streamMessages()).toBe(stored);
  });

  it('refuses an altered payload (another platform) with the original signature', async () => {
    const [, signature] = tokenOf(valid.exposure_url).split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(tokenOf(valid.exposure_url)), agent_id: 'agent_victim' })).toString('base64url');
    await expectNotFound(await exposure(`${forged}.${signature}`));
  });

  it('refuses a click token whose landing URL was changed', async () => {
    const [, signature] = tokenOf(valid.click_url).split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(tokenOf(valid.click_url)), landing_url: 'https://evil.example/' })).toString('base64url');
    await expectNotFound(await click(`${forged}.${signature}`));
  });

  it('refuses an altered signature', async () => {
    const token = tokenOf(valid.exposure_url);
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    await expectNotFound(await exposure(`${token.slice(0, -2)}${last}${token.at(-1)}`));
    await expectNotFound(await exposure(`${token}A`));
    await expectNotFound(await exposure(token.slice(0, -1)));
  });

  it('refuses a token signed with another secret', async () => {
    const claims = claimsOf(tokenOf(valid.exposure_url));
    await expectNotFound(await exposure(signTrackingToken(claims, OTHER_SECRET)));
    // The same claims with the right secret pass: the secret made the difference.
    expect((await exposure(signTrackingToken(claims, SECRET))).status).toBe(204);
    stored += 1;
  });

  it('refuses a validly signed token with an unsafe landing URL or the wrong shape', async () => {
    const claims = claimsOf(tokenOf(valid.click_url));
    await expectNotFound(await click(signTrackingToken({ ...claims, landing_url: 'javascript:alert(1)' }, SECRET)));
    await expectNotFound(await click(signTrackingToken({ ...claims, v: 2 } as unknown as SignedTrackingClaims, SECRET)));
    await expectNotFound(await click(signTrackingToken({ ...claims, traffic: 'prod' } as unknown as SignedTrackingClaims, SECRET)));
  });

  it('refuses an exposure token on the click route and a click token on the exposure route', async () => {
    await expectNotFound(await click(tokenOf(valid.exposure_url)));
    await expectNotFound(await exposure(tokenOf(valid.click_url)));
  });

  it('refuses garbage, an empty, missing or repeated t', async () => {
    for (const token of ['garbage', 'a.b', '.', 'x'.repeat(5000), `${'eyJ9'}.${'A'.repeat(43)}`, '']) {
      await expectNotFound(await exposure(token));
      await expectNotFound(await click(token));
    }
    await expectNotFound(await fetch(`${base}/track/exposure`));
    await expectNotFound(await fetch(`${base}/track/click?token=${tokenOf(valid.click_url)}`, { redirect: 'manual' }));
    const token = tokenOf(valid.exposure_url);
    await expectNotFound(await fetch(`${base}/track/exposure?t=${token}&t=${token}`));
  });
});

describe('when JetStream does not acknowledge', () => {
  it('answers 503 with Retry-After and redirects nowhere; works again once the stream is back', async () => {
    const { exposure_url, click_url } = await links('msg_outage');
    await jsm.streams.delete(Streams.events);
    const shown = await fetch(exposure_url);
    expect(shown.status).toBe(503);
    expect(shown.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(shown.headers.get('retry-after'))).toBeGreaterThan(0);
    const clicked = await fetch(click_url, { redirect: 'manual' });
    expect(clicked.status).toBe(503);
    expect(clicked.headers.get('location')).toBeNull();

    await jsm.streams.add(STREAM_CONFIGS.find((c) => c.name === Streams.events)!);
    expect((await fetch(exposure_url)).status).toBe(204);
    expect(await streamMessages()).toBe(1);
  });
});
