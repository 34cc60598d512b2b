import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { newTestDatabase, startNats, type TestDatabase, type TestNats } from '../support/index.js';
import { startGatewayWithOidc } from '../support/oidc.js';

/**
 * TRUSTED_PROXIES (issue 12 item 9): X-Forwarded-For is believed only from the peers it names.
 * A real HTTP client on loopback sends the header to a gateway that trusts 127.0.0.1/32, to one
 * that trusts nobody (the default) and to one that trusts another range. What the gateway takes
 * for the client address shows in the per-address limit of failed authentications
 * (AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE = 3): the address that failed is refused (429), any
 * other is not.
 */
const FAILURES = 3;
const LIMITS = { AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE: String(FAILURES) };

let nats: TestNats;
const gateways: NestFastifyApplication[] = [];
const databases: TestDatabase[] = [];

beforeAll(async () => {
  nats = await startNats();
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  for (const db of databases) await db.drop();
  await nats?.stop();
});

/** A gateway with these TRUSTED_PROXIES (undefined: the default), on its own database: its own limiter namespace. */
async function gateway(trustedProxies: string | undefined): Promise<string> {
  const own = newTestDatabase();
  databases.push(own);
  const { app, base } = await startGatewayWithOidc({
    natsUrl: nats.url,
    databaseUrl: own.url,
    oidc: false,
    extra: { ...LIMITS, ...(trustedProxies === undefined ? {} : { TRUSTED_PROXIES: trustedProxies }) },
  });
  gateways.push(app);
  return base;
}

/** GET /agent/reporting with a wrong API key and these headers; the status. */
async function wrongKey(base: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${base}/agent/reporting?time_range=7d`, { headers: { authorization: `Bearer sk_live_${'x'.repeat(40)}`, ...headers } });
  await response.arrayBuffer();
  return response.status;
}

async function failFrom(base: string, headers: Record<string, string>): Promise<void> {
  const statuses: number[] = [];
  for (let i = 0; i < FAILURES; i++) statuses.push(await wrongKey(base, headers));
  expect(statuses).toEqual(Array(FAILURES).fill(401));
}

it('believes X-Forwarded-For from 127.0.0.1 when TRUSTED_PROXIES names 127.0.0.1/32', async () => {
  const base = await gateway('127.0.0.1/32');
  await failFrom(base, { 'x-forwarded-for': '203.0.113.10' });
  // That forwarded address is now refused; another forwarded address, and loopback itself, are not.
  expect(await wrongKey(base, { 'x-forwarded-for': '203.0.113.10' })).toBe(429);
  expect(await wrongKey(base, { 'x-forwarded-for': '203.0.113.11' })).toBe(401);
  expect(await wrongKey(base)).toBe(401);
  // The address is the nearest one not trusted: an address the client prepends changes nothing.
  expect(await wrongKey(base, { 'x-forwarded-for': '198.51.100.7, 203.0.113.10' })).toBe(429);
});

it('ignores X-Forwarded-For by default (no TRUSTED_PROXIES): the address is the TCP peer', async () => {
  const base = await gateway(undefined);
  // Failures sent under three different forwarded addresses all count against 127.0.0.1.
  for (const address of ['203.0.113.20', '203.0.113.21', '203.0.113.22']) expect(await wrongKey(base, { 'x-forwarded-for': address })).toBe(401);
  expect(await wrongKey(base, { 'x-forwarded-for': '203.0.113.23' })).toBe(429);
  expect(await wrongKey(base)).toBe(429);
});

it('ignores X-Forwarded-For from a peer outside TRUSTED_PROXIES', async () => {
  const base = await gateway('10.0.0.0/8, 192.0.2.1');
  await failFrom(base, { 'x-forwarded-for': '203.0.113.30' });
  expect(await wrongKey(base, { 'x-forwarded-for': '203.0.113.31' })).toBe(429);
});
