import { createHmac } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { GatewayOutboxEntity, GeneratedSecretEntity, IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { createLogger, type Logger } from '#libs/observability';
import {
  QueueGroups,
  RecommendationEventDto,
  RpcSubjects,
  Streams,
  type RankedRecommendation,
} from '#libs/contracts';
import type { RecommendRequest } from '#libs/recommend-request';
import { STREAM_CONFIGS } from '#libs/nats';
import { redisKeyPrefix } from '../../apps/gateway/src/rate-limit/rate-limit.store.js';
import { GENERATED_TRACKING_SECRET } from '../../apps/gateway/src/tracking/tracking-secrets.provider.js';
import { signTrackingToken, type SignedTrackingClaims } from '../../apps/gateway/src/tracking/tracking-token.js';
import { metricValue, ops } from '../faults/support/services.js';
import {
  REDIS_URL,
  identityDataSourceOf,
  newTestDatabase,
  seedPlatform,
  startGateway as startStackGateway,
  startPrivateRedis,
  useTestStack,
  waitFor,
  type PrivateRedis,
  type TestDatabase,
  type TestGateway,
} from '../support/index.js';

/**
 * GET /track/exposure and /track/click over real HTTP with this file's private nats-server:
 * a valid token publishes exactly one DESIGN §4 event to the EVENTS stream (PubAck awaited);
 * every forged, altered or foreign token answers 404 and publishes nothing. The URLs come from
 * POST /agent/recommend in front of a stand-in recommendations service (a real NATS subscriber).
 * Issue 12: no secret in code (a generated one, shared through the identity schema; the
 * formerly published one refused), and a valid link that records nothing — expired, its
 * platform suspended (ops CLI), its address over the limit, or recorded before (Redis, also
 * after JetStream's duplicate window) — still answers as the user expects.
 */

const SECRET = 'gateway-tracking-test-secret-current-0001';
/** The development default the gateway shipped until issue 12, published in this repository's history. */
const PUBLISHED_DEV_SECRET = 'dev-only-tracking-signing-secret-do-not-use-in-production';
const PREVIOUS_SECRET = 'gateway-tracking-test-secret-previous-0002';
const OTHER_SECRET = 'gateway-tracking-test-secret-unknown-0003';
const CREATED_AT = '2026-11-25T10:15:42.120Z';
const LANDING = 'https://shop.example/trail-runner-2?utm_source=weave&x=1';

const stack = useTestStack();
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

/**
 * A gateway on this file's NATS (and, unless `settings` say otherwise, database and Redis),
 * listening on loopback; no PUBLIC_BASE_URL: its links point at the address it listens on.
 */
/** A gateway without OIDC on the file's servers (and without a tracking secret unless given). */
function startGateway(settings: Record<string, string>, logger?: Logger): Promise<TestGateway> {
  return startStackGateway(stack, { oidc: false, trackingSecret: false, logger, extra: { LOG_LEVEL: 'warn', ...settings } });
}

beforeAll(async () => {
  ({ base } = await startGateway({ TRACKING_SIGNING_SECRET: SECRET, TRACKING_SIGNING_SECRET_PREVIOUS: PREVIOUS_SECRET }));
  ({ live: liveKey, test: testKey } = (await seedPlatform(stack, 'agent_track', { keys: ['live', 'test'] })).keys);

  responder = await connect({ servers: stack.nats.url });
  stack.atEnd(() => responder.close());
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

interface Links {
  exposure_url: string;
  click_url: string;
  recommendation_id: string;
}

async function links(messageId: string, key = liveKey, gateway = base): Promise<Links> {
  const response = await fetch(`${gateway}/agent/recommend`, {
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

async function trackingMetric(base_: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricValue(await (await fetch(`${base_}/metrics`)).text(), name, labels);
}

const DAY_MS = 86_400_000;
const seconds = (ms: number) => Math.floor(ms / 1000);

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
    // The development default this repository once published: anyone could sign with it.
    await expectNotFound(await exposure(signTrackingToken(claims, PUBLISHED_DEV_SECRET)));
    await expectNotFound(await click(signTrackingToken({ ...claimsOf(tokenOf(valid.click_url)), landing_url: 'https://evil.example/' }, PUBLISHED_DEV_SECRET)));
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

describe('a valid link that records nothing still answers as the user expects (DESIGN §5)', () => {
  let valid: Links;
  beforeAll(async () => {
    valid = await links('msg_records_nothing');
  });

  /** Both routes of `claims` (signed with SECRET): 204, and 302 to the landing page; the stream unchanged. */
  async function answersWithoutRecording(claims: SignedTrackingClaims, clickClaims: SignedTrackingClaims): Promise<void> {
    const before = await streamMessages();
    const shown = await exposure(signTrackingToken(claims, SECRET));
    expect(shown.status).toBe(204);
    const clicked = await click(signTrackingToken(clickClaims, SECRET));
    expect([clicked.status, clicked.headers.get('location')]).toEqual([302, LANDING]);
    expect(await streamMessages()).toBe(before);
  }

  it(`an expired link (its exp passed): 204 / 302, nothing recorded, counted as expired`, async () => {
    const past = seconds(Date.now()) - 1;
    const expiredBefore = await trackingMetric(base, 'weave_tracking_requests_total', { outcome: 'expired' });
    await answersWithoutRecording(
      { ...claimsOf(tokenOf(valid.exposure_url)), recommendation_id: 'rec_expired', exp: past },
      { ...claimsOf(tokenOf(valid.click_url)), recommendation_id: 'rec_expired', exp: past },
    );
    expect(await trackingMetric(base, 'weave_tracking_requests_total', { outcome: 'expired' })).toBe(expiredBefore + 2);
  });

  it('links signed with an exp carry TRACKING_LINK_TTL_DAYS (30) from now', () => {
    const exp = claimsOf(tokenOf(valid.click_url)).exp!;
    expect(Math.abs(exp - seconds(Date.now() + 30 * DAY_MS))).toBeLessThan(120);
  });

  it('a token signed before links had an exp expires TRACKING_LINK_TTL_DAYS after its recommendation was made', async () => {
    const legacy = (token: string, id: string, createdAt: Date): SignedTrackingClaims => {
      const { exp: _exp, ...claims } = claimsOf(token);
      return { ...claims, recommendation_id: id, recommendation_created_at: createdAt.toISOString() };
    };
    const old = new Date(Date.now() - 31 * DAY_MS);
    await answersWithoutRecording(legacy(tokenOf(valid.exposure_url), 'rec_legacy_old', old), legacy(tokenOf(valid.click_url), 'rec_legacy_old', old));
    const before = await streamMessages();
    expect((await exposure(signTrackingToken(legacy(tokenOf(valid.exposure_url), 'rec_legacy_recent', new Date(Date.now() - DAY_MS)), SECRET))).status).toBe(204);
    expect(await streamMessages()).toBe(before + 1);
  });

  it('links of a suspended platform (ops platform suspend): 204 / 302, nothing recorded; recorded again once it is active', async () => {
    const { key } = await seedPlatform(stack, 'agent_track_suspended');
    const before = await links('msg_suspended', key);
    const env = { DATABASE_URL: stack.db.url, NATS_URL: stack.nats.url };
    await ops(['platform', 'suspend', '--agent-id', 'agent_track_suspended'], env);
    const stored = await streamMessages();
    const shown = await fetch(before.exposure_url);
    expect(shown.status).toBe(204);
    const clicked = await fetch(before.click_url, { redirect: 'manual' });
    expect([clicked.status, clicked.headers.get('location')]).toEqual([302, LANDING]);
    expect(await streamMessages()).toBe(stored);
    expect(await trackingMetric(base, 'weave_tracking_requests_total', { kind: 'clicked', outcome: 'suspended' })).toBeGreaterThanOrEqual(1);

    await ops(['platform', 'activate', '--agent-id', 'agent_track_suspended'], env);
    expect((await fetch(before.click_url, { redirect: 'manual' })).status).toBe(302);
    expect(await streamMessages()).toBe(stored + 1);
  });

  it("publishes each (recommendation, kind) once: a replay after the stream's duplicate window stores nothing", async () => {
    const events = STREAM_CONFIGS.find((c) => c.name === Streams.events)!;
    await jsm.streams.update(Streams.events, { ...events, duplicate_window: 1_000_000_000 }); // 1 s
    try {
      const { click_url, recommendation_id } = await links('msg_replay');
      const before = await streamMessages();
      expect((await fetch(click_url, { redirect: 'manual' })).status).toBe(302);
      expect(await streamMessages()).toBe(before + 1);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Replayed after the window: still a 302, nothing stored.
      for (let i = 0; i < 3; i++) expect((await fetch(click_url, { redirect: 'manual' })).status).toBe(302);
      expect(await streamMessages()).toBe(before + 1);
      // The window really had passed: without the gateway's claim in Redis, JetStream stores the replay.
      const redis = new Redis(REDIS_URL);
      try {
        const claim = `${redisKeyPrefix('tracking', stack.db.url)}:event:evt_clicked_${recommendation_id}`;
        const ttlMs = await redis.pttl(claim);
        expect(ttlMs).toBeGreaterThan(30 * DAY_MS); // kept past the link's expiry
        await redis.del(claim);
      } finally {
        redis.disconnect();
      }
      expect((await fetch(click_url, { redirect: 'manual' })).status).toBe(302);
      expect(await streamMessages()).toBe(before + 2);
    } finally {
      await jsm.streams.update(Streams.events, events);
    }
  });
});

describe('rotating the signing secret (TRACKING_SIGNING_SECRET_PREVIOUS verifies, never signs)', () => {
  /** The secret a rotation brings in; SECRET, which signed the links handed out so far, becomes the previous one. */
  const ROTATED_SECRET = 'gateway-tracking-test-secret-rotated-0004';
  let rotated: TestGateway;
  let retired: TestGateway;
  let handedOut: Links;

  beforeAll(async () => {
    handedOut = await links('msg_before_rotation');
    rotated = await startGateway({ TRACKING_SIGNING_SECRET: ROTATED_SECRET, TRACKING_SIGNING_SECRET_PREVIOUS: SECRET });
    // After the grace period: the previous secret removed.
    retired = await startGateway({ TRACKING_SIGNING_SECRET: ROTATED_SECRET });
  });
  afterAll(async () => {
    await rotated?.close();
    await retired?.close();
  });

  const on = (gateway: TestGateway, url: string) => fetch(`${gateway.base}${new URL(url).pathname}${new URL(url).search}`, { redirect: 'manual' });

  it('during the rotation, links handed out before it still record (exposure 204, click 302) on a gateway with the new secret', async () => {
    const before = await streamMessages();
    expect((await on(rotated, handedOut.exposure_url)).status).toBe(204);
    const clicked = await on(rotated, handedOut.click_url);
    expect([clicked.status, clicked.headers.get('location')]).toEqual([302, LANDING]);
    expect(await streamMessages()).toBe(before + 2);
    expect((await lastEvent('clicked')).payload.recommendation_id).toBe(handedOut.recommendation_id);
  });

  it('signs every new link with the new secret, never with the previous one', async () => {
    const fresh = await links('msg_after_rotation', liveKey, rotated.base);
    for (const url of [fresh.exposure_url, fresh.click_url]) {
      const [payload, signature] = tokenOf(url).split('.');
      expect(signature).toBe(createHmac('sha256', ROTATED_SECRET).update(payload).digest('base64url'));
      expect(signature).not.toBe(createHmac('sha256', SECRET).update(payload).digest('base64url'));
    }
    expect((await on(rotated, fresh.exposure_url)).status).toBe(204);
    // A gateway that has not rotated yet does not take them: they are not signed with its secret.
    await expectNotFound(await fetch(fresh.exposure_url.replace(rotated.base, base)));
  });

  it('refuses a link signed with neither secret, and the previous secret once it is removed', async () => {
    const claims = { ...claimsOf(tokenOf(handedOut.exposure_url)), recommendation_id: 'rec_neither_secret' };
    const before = await streamMessages();
    await expectNotFound(await fetch(`${rotated.base}/track/exposure?t=${signTrackingToken(claims, OTHER_SECRET)}`));
    await expectNotFound(await on(retired, handedOut.exposure_url));
    await expectNotFound(await on(retired, handedOut.click_url));
    expect(await streamMessages()).toBe(before);
  });
});

describe('per-address limit on /track/* (TRACKING_LIMIT_PER_IP_PER_MINUTE)', () => {
  let limited: TestGateway;
  let limitedBase: string;

  beforeAll(async () => {
    ({ base: limitedBase } = limited = await startGateway({ TRACKING_SIGNING_SECRET: SECRET, TRACKING_LIMIT_PER_IP_PER_MINUTE: '3', TRUSTED_PROXIES: '127.0.0.1/32' }));
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('over the limit: still 204 / 302, nothing recorded, counted; another address is unaffected', async () => {
    const template = claimsOf(tokenOf((await links('msg_limit')).click_url));
    const clickFrom = (address: string, id: string) =>
      fetch(`${limitedBase}/track/click?t=${encodeURIComponent(signTrackingToken({ ...template, recommendation_id: id }, SECRET))}`, {
        redirect: 'manual',
        headers: { 'x-forwarded-for': address },
      });
    const before = await streamMessages();
    for (let i = 0; i < 3; i++) expect((await clickFrom('203.0.113.50', `rec_limit_${i}`)).status).toBe(302);
    expect(await streamMessages()).toBe(before + 3);
    const limitedBefore = await trackingMetric(limitedBase, 'weave_tracking_requests_total', { outcome: 'rate_limited' });
    const over = await clickFrom('203.0.113.50', 'rec_limit_3');
    expect([over.status, over.headers.get('location')]).toEqual([302, LANDING]);
    const overExposure = await fetch(
      `${limitedBase}/track/exposure?t=${encodeURIComponent(signTrackingToken({ ...template, kind: 'shown', landing_url: undefined, recommendation_id: 'rec_limit_4' }, SECRET))}`,
      { headers: { 'x-forwarded-for': '203.0.113.50' } },
    );
    expect(overExposure.status).toBe(204);
    expect(await streamMessages()).toBe(before + 3);
    expect(await trackingMetric(limitedBase, 'weave_tracking_requests_total', { outcome: 'rate_limited' })).toBe(limitedBefore + 2);
    // Another client address has its own bucket.
    expect((await clickFrom('203.0.113.51', 'rec_limit_3')).status).toBe(302);
    expect(await streamMessages()).toBe(before + 4);
  });
});

describe('with Redis unavailable', () => {
  let redis: PrivateRedis;
  let unguarded: TestGateway;
  let unguardedBase: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    ({ base: unguardedBase } = unguarded = await startGateway({ TRACKING_SIGNING_SECRET: SECRET, REDIS_URL: redis.url }));
  });
  afterAll(async () => {
    await unguarded?.close();
    await redis?.destroy();
  });

  it('records links unchecked (fails open, counted); JetStream still drops a repeat inside its window', async () => {
    const template = claimsOf(tokenOf((await links('msg_redis_down')).click_url));
    const token = signTrackingToken({ ...template, recommendation_id: 'rec_redis_down' }, SECRET);
    await redis.stop('SIGKILL');
    const failOpenBefore = await trackingMetric(unguardedBase, 'weave_tracking_checks_fail_open_total');
    const before = await streamMessages();
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${unguardedBase}/track/click?t=${encodeURIComponent(token)}`, { redirect: 'manual' });
      expect([response.status, response.headers.get('location')]).toEqual([302, LANDING]);
    }
    expect(await streamMessages()).toBe(before + 1);
    expect(await trackingMetric(unguardedBase, 'weave_tracking_checks_fail_open_total')).toBeGreaterThanOrEqual(failOpenBefore + 2);
  });
});

describe('the signing secret (no default in code)', () => {
  let fresh: TestDatabase;
  const started: TestGateway[] = [];
  const logLines: string[] = [];

  /** A gateway without TRACKING_SIGNING_SECRET on the fresh database; its log lines are kept. */
  async function startWithoutSecret(): Promise<string> {
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) => logLines.push(...chunk.toString().split('\n').filter(Boolean)));
    const gateway = await startGateway({ DATABASE_URL: fresh.url }, createLogger('gateway', 'warn', out));
    started.push(gateway);
    return gateway.base;
  }

  beforeAll(() => {
    fresh = newTestDatabase();
  });
  afterAll(async () => {
    for (const app of started) await app.close();
    await fresh?.drop();
  });

  it('is generated once when unset: replicas starting together share it, a restart keeps it, the value is never logged', async () => {
    // Two replicas racing at first start on an empty database.
    const [first, second] = await Promise.all([startWithoutSecret(), startWithoutSecret()]);
    const source = createIdentityDataSource(fresh.url, 1, 'gateway-tracking-secret-test');
    await source.initialize();
    try {
      const rows = await source.getRepository(GeneratedSecretEntity).find();
      expect(rows.map((row) => row.name)).toEqual([GENERATED_TRACKING_SECRET]);
      const generated = rows[0].secret;
      expect(generated.length).toBeGreaterThanOrEqual(32);

      // Links signed with it verify on both replicas; the published development string does not.
      const identity = new IdentityRepository(source);
      await identity.createPlatform('agent_generated');
      const claims = { ...claimsOf(tokenOf((await links('msg_generated')).exposure_url)), agent_id: 'agent_generated', recommendation_id: 'rec_generated' };
      expect((await fetch(`${first}/track/exposure?t=${signTrackingToken(claims, generated)}`)).status).toBe(204);
      expect((await fetch(`${second}/track/exposure?t=${signTrackingToken({ ...claims, recommendation_id: 'rec_generated_2' }, generated)}`)).status).toBe(204);
      for (const gateway of [first, second]) expect((await fetch(`${gateway}/track/exposure?t=${signTrackingToken(claims, PUBLISHED_DEV_SECRET)}`)).status).toBe(404);

      // A restarted replica signs with the same secret.
      await started.shift()!.close();
      const third = await startWithoutSecret();
      expect((await fetch(`${third}/track/exposure?t=${signTrackingToken({ ...claims, recommendation_id: 'rec_generated_3' }, generated)}`)).status).toBe(204);

      // Every start warned, and no log line holds the secret.
      await waitFor(async () => logLines.filter((line) => line.includes('TRACKING_SIGNING_SECRET is not set')).length === 3, { what: 'three warnings' });
      expect(logLines.filter((line) => line.includes(generated))).toEqual([]);
      expect(await (await fetch(`${third}/metrics`)).text()).not.toContain(generated);
    } finally {
      await source.destroy();
    }
  });
});

describe('when JetStream does not acknowledge', () => {
  it('still answers 204 / 302, keeps the events in the outbox, and the relay publishes them once the stream is back', async () => {
    const { exposure_url, click_url, recommendation_id } = await links('msg_outage');
    const deferredBefore = await trackingMetric(base, 'weave_tracking_requests_total', { outcome: 'deferred' });
    await jsm.streams.delete(Streams.events);

    expect((await fetch(exposure_url)).status).toBe(204);
    const clicked = await fetch(click_url, { redirect: 'manual' });
    expect([clicked.status, clicked.headers.get('location')]).toEqual([302, LANDING]);
    expect(await trackingMetric(base, 'weave_tracking_requests_total', { outcome: 'deferred' })).toBe(deferredBefore + 2);
    const outbox = (await identityDataSourceOf(stack)).getRepository(GatewayOutboxEntity);
    const kept = await outbox.find({ order: { event_id: 'ASC' } });
    expect(kept.map((row) => [row.event_id, row.subject])).toEqual([
      [`evt_clicked_${recommendation_id}`, 'events.recommendation.clicked'],
      [`evt_shown_${recommendation_id}`, 'events.recommendation.shown'],
    ]);

    // The stream is back: the relay's sweep publishes both, with their ids, and clears the outbox.
    await jsm.streams.add(STREAM_CONFIGS.find((c) => c.name === Streams.events)!);
    await waitFor(async () => (await streamMessages()) === 2 && (await outbox.count()) === 0, { timeoutMs: 30000, what: 'outbox relayed' });
    for (const kind of ['shown', 'clicked'] as const) {
      const { payload, msgId } = await lastEvent(kind);
      expect(msgId).toBe(`evt_${kind}_${recommendation_id}`);
      expectDesignEvent(payload);
      expect(payload).toMatchObject({ event_id: msgId, recommendation_id, agent_id: 'agent_track', billable: kind === 'clicked' });
    }
    expect(await trackingMetric(base, 'weave_tracking_events_published_total', { path: 'sweep' })).toBeGreaterThanOrEqual(2);

    // Recorded once: opening the links again publishes nothing more.
    expect((await fetch(exposure_url)).status).toBe(204);
    expect((await fetch(click_url, { redirect: 'manual' })).status).toBe(302);
    expect(await streamMessages()).toBe(2);
  });
});
