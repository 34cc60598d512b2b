import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { redisKeyPrefix } from '../../apps/gateway/src/rate-limit/rate-limit.store.js';
import { TrackingChecks } from '../../apps/gateway/src/tracking/tracking-checks.service.js';
import { REDIS_URL, testLogger, waitFor } from '../support/index.js';

/**
 * The tracking routes' Redis checks against the real Redis: the once-only claim of an event,
 * held after its PubAck until the link has expired — also for an event published unchecked
 * (Redis did not answer its admission in time), so that its repeats are not published again once
 * JetStream's duplicate window has passed.
 */
const DAY_MS = 24 * 60 * 60 * 1000;
// A database URL of its own: the keys' namespace, so nothing else's claims are touched.
const env = loadEnv(GatewayEnv, { REDIS_URL, DATABASE_URL: `postgres://weave@127.0.0.1:1/tracking_checks_${randomUUID().slice(0, 8)}` });
const claimKey = (eventId: string) => `${redisKeyPrefix('tracking', env.DATABASE_URL)}:event:${eventId}`;
let checks: TrackingChecks;
let redis: Redis;

beforeAll(async () => {
  checks = new TrackingChecks(env, testLogger('tracking-checks'));
  await checks.onModuleInit();
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  await checks.onApplicationShutdown();
  // The claims would otherwise stay in the shared Redis for the links' life.
  await redis.del(...['evt_shown_rec_checks_1', 'evt_clicked_rec_checks_2', 'evt_shown_rec_checks_3'].map(claimKey));
  redis.disconnect();
});

it('admits the first request of an event, holds the claim after the PubAck until the link has expired, and refuses repeats', async () => {
  expect(await checks.admit('198.51.100.7', 'evt_shown_rec_checks_1')).toBe('admitted');
  expect(await checks.admit('198.51.100.8', 'evt_shown_rec_checks_1')).toBe('duplicate');
  checks.confirm('evt_shown_rec_checks_1', Date.now() + 30 * DAY_MS);
  await waitFor(async () => (await redis.pttl(claimKey('evt_shown_rec_checks_1'))) > 30 * DAY_MS, { what: 'the claim held for the link\'s life' });
  expect(await checks.admit('198.51.100.9', 'evt_shown_rec_checks_1')).toBe('duplicate');
});

it('claims an event published unchecked once its PubAck comes, so that its repeat is not published again', async () => {
  // No admission reached Redis (it did not answer in time): the event was published without a claim.
  expect(await redis.exists(claimKey('evt_clicked_rec_checks_2'))).toBe(0);
  checks.confirm('evt_clicked_rec_checks_2', Date.now() + 7 * DAY_MS);
  await waitFor(async () => (await redis.pttl(claimKey('evt_clicked_rec_checks_2'))) > 7 * DAY_MS, { what: 'the unchecked event claimed' });
  expect(await checks.admit('198.51.100.7', 'evt_clicked_rec_checks_2')).toBe('duplicate');
});

it('releases the claim of a publication that failed, so that a retry records', async () => {
  expect(await checks.admit('198.51.100.7', 'evt_shown_rec_checks_3')).toBe('admitted');
  await checks.release('evt_shown_rec_checks_3');
  expect(await checks.admit('198.51.100.7', 'evt_shown_rec_checks_3')).toBe('admitted');
});
