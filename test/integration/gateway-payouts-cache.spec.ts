import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import pg from 'pg';
import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { ENTRY_OVERHEAD_BYTES } from '#libs/cache';
import { BroadcastSubjects, Durables, RpcSubjects, Streams } from '#libs/contracts';
import { NatsClient, NatsRpcClient, type RawJson } from '#libs/nats';
import { loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { PayoutsReplyCache } from '../../apps/gateway/src/payouts/payouts-reply-cache.js';
import {
  connectStackProducer,
  payoutBalanceEvent,
  seedPlatform,
  startGateway,
  startIdentityProvider,
  startPayoutsRead,
  testLogger,
  useTestStack,
  waitFor,
  waitForConsumer,
  type Producer,
  type TestGateway,
} from '../support/index.js';
import { signIdToken } from '../support/oidc.js';

/**
 * The gateway's cache of payout replies (PayoutsReplyCache) over real HTTP, NATS, payouts-read
 * and PostgreSQL. payouts-read runs without its own cache (PAYOUTS_CACHE_TTL_MS=0), so a row
 * changed directly in its database (which announces nothing) shows through payouts-read at
 * once but through the gateway only when the gateway's entry goes: that tells a cached answer
 * from a fetched one without looking inside the gateway.
 *
 * Gateways: `cached` keeps every reply (PAYOUTS_CACHE_MIN_BYTES=0) for 60 s, so within a test
 * only an announcement or a flush can make it fetch again; `short` has the default size
 * threshold (16 KiB) and a 1.5 s TTL.
 */

const stack = useTestStack();
let cached: TestGateway;
let short: TestGateway;
let producer: Producer;
let client: NatsClient;
/** Asks payouts-read directly; results come back as the JSON bytes it sent. */
let rawRpc: ClientProxy;
let sql: pg.Client;
const tokens: Record<string, string> = {};

const A = 'agent_gwc_a'; // newer events are applied
const B = 'agent_gwc_b'; // unaffected by A's changes
const C = 'agent_gwc_c'; // TTL expiry
const D = 'agent_gwc_d'; // NATS reconnect
const E = 'agent_gwc_e'; // compression
const PLATFORMS = [A, B, C, D, E];
const STATEMENTS = 40;
const DAY = 86_400_000;
const FIRST = Date.UTC(2025, 0, 1);
let msgId = 0;
let lastSeq = 0;

const iso = (t: number) => new Date(t).toISOString();

function statement(agent: string, n: number, version = 1, net = 90_000_000 + n) {
  const end = FIRST + (n + 1) * DAY;
  const status = n >= STATEMENTS - 2 ? 'LOCKED' : n % 10 === 3 ? 'FAILED' : n % 10 === 5 ? 'BLOCKED' : 'PAID';
  return {
    statement_id: `st_${agent}_${String(n).padStart(3, '0')}`,
    agent_id: agent,
    period_start: iso(end - DAY),
    period_end: iso(end),
    currency: 'USD',
    status,
    gross_earnings_micros: 100_000_000 + n,
    service_fee_micros: 10_000_000,
    net_earnings_micros: net,
    blocked_reason: status === 'BLOCKED' ? 'The tax form is missing.' : null,
    failure: status === 'FAILED' ? { code: 'account_closed', message: 'The beneficiary account is closed.' } : null,
    transfer:
      status === 'PAID'
        ? {
            transfer_reference: `tr_${agent}_${n}`,
            status: 'settled',
            initiated_at: iso(end + 3_600_000),
            settled_at: iso(end + 2 * DAY),
            source_currency: 'USD',
            source_amount_micros: net,
            target_currency: n % 3 === 0 ? 'EUR' : 'USD',
            amount_received_micros: 89_000_000,
            fee_micros: 500_000,
            exchange_rate: n % 3 === 0 ? '0.9277' : null,
          }
        : null,
    created_at: iso(end + 600_000),
    updated_at: iso(end + 2 * DAY + version),
    version,
  };
}

const balance = (agent: string, version: number, available: number) =>
  payoutBalanceEvent(agent, 'USD', 0, {
    pending_micros: 1_000,
    available_micros: available,
    locked_micros: 2_000,
    paid_out_micros: 3_000,
    updated_at: iso(Date.UTC(2026, 10, 1) + version * 60_000),
    version,
  });

const readiness = (agent: string, version: number, status: 'in_progress' | 'complete') => ({
  agent_id: agent,
  setup_status: status,
  missing_fields: status === 'complete' ? [] : ['tax_form'],
  thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
  blocked_reason: null,
  updated_at: iso(Date.UTC(2026, 10, 1) + version * 60_000),
  version,
});

async function publish(kind: 'balance' | 'readiness' | 'statement', payload: unknown): Promise<void> {
  lastSeq = await producer.publishRaw(`events.payouts.${kind}`, JSON.stringify(payload), `gwc-${++msgId}`);
}

/** Until payouts-read has applied and acked everything published (it announces before it acks). */
async function applied(): Promise<void> {
  await waitForConsumer(producer, Streams.events, Durables.payoutsRead, { delivered: lastSeq, what: 'payouts-read caught up', intervalMs: 50 });
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET whose body comes back exactly as sent (fetch would decompress it). */
function get(base: string, path: string, agent: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/agent-payouts/me${path}`, { headers: { authorization: `Bearer ${tokens[agent]}`, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

async function json<T>(base: string, path: string, agent: string): Promise<T> {
  const response = await get(base, path, agent);
  expect([path, response.status]).toEqual([path, 200]);
  return JSON.parse(response.body.toString()) as T;
}

/** What payouts-read itself answers now (it caches nothing here). */
async function fromPayoutsRead(subject: string, payload: object): Promise<Buffer> {
  const answer = await firstValueFrom(rawRpc.send<RawJson>(subject, payload));
  return Buffer.from(answer.bytes);
}

/** Every route of a platform: path, RPC subject and payload. */
const routes = (agent: string): [string, string, object][] => [
  ['/balance', RpcSubjects.payoutsBalanceGet, { agent_id: agent }],
  ['/readiness', RpcSubjects.payoutsReadinessGet, { agent_id: agent }],
  ['/overview', RpcSubjects.payoutsOverviewGet, { agent_id: agent }],
  ['/statements?page_size=100', RpcSubjects.payoutsStatementsList, { agent_id: agent, page_size: 100 }],
  ['/statements?status=PAID&page=2&page_size=5', RpcSubjects.payoutsStatementsList, { agent_id: agent, status: 'PAID', page: 2, page_size: 5 }],
  [`/statements/st_${agent}_039`, RpcSubjects.payoutsStatementGet, { agent_id: agent, statement_id: `st_${agent}_039` }],
  ['/history', RpcSubjects.payoutsHistoryList, { agent_id: agent }],
];

interface Page {
  items: { statement_id: string; agent_id: string; status: string; net_earnings_micros: number }[];
  total: number;
}

beforeAll(async () => {
  const { jwks, key } = await startIdentityProvider(stack, ['ES256']);
  stack.track(await startPayoutsRead({ ...stack.urls, PAYOUTS_CACHE_TTL_MS: 0, PAYOUTS_INGEST_BATCH_SIZE: 100 }));
  cached = await startGateway(stack, { jwksUrl: jwks.url, extra: { PAYOUTS_CACHE_TTL_MS: '60000', PAYOUTS_CACHE_MIN_BYTES: '0' } });
  short = await startGateway(stack, { jwksUrl: jwks.url, extra: { PAYOUTS_CACHE_TTL_MS: '1500', PAYOUTS_CACHE_MIN_BYTES: '16384' } });
  for (const agent of PLATFORMS) {
    await seedPlatform(stack, agent, { owner: `uid_${agent}`, keys: [] });
    tokens[agent] = await signIdToken(key, { sub: `uid_${agent}`, role: 'agent' });
  }
  producer = await connectStackProducer(stack);
  client = await NatsClient.connect({ servers: [stack.nats.url], name: 'gateway-payouts-cache-test' });
  stack.atEnd(() => client.drain());
  rawRpc = new NatsRpcClient({ connection: client.connection, timeoutMs: 5000, rawResults: true });
  sql = new pg.Client({ connectionString: stack.db.url });
  await sql.connect();
  stack.atEnd(() => sql.end());
  for (const agent of PLATFORMS) {
    await publish('balance', balance(agent, 1, 100));
    await publish('readiness', readiness(agent, 1, 'in_progress'));
    for (let n = 0; n < STATEMENTS; n++) await publish('statement', statement(agent, n));
  }
  await applied();
}, 60_000);

describe('the gateway payout cache', () => {
  it('answers every route with exactly the bytes payouts-read sends, and keeps them', async () => {
    for (const [path, subject, payload] of routes(B)) {
      const first = await get(cached.base, path, B);
      expect([path, first.status, first.headers['content-type'], first.headers['cache-control']]).toEqual([
        path,
        200,
        'application/json; charset=utf-8',
        'private, no-store',
      ]);
      expect(first.headers['content-encoding']).toBeUndefined();
      expect(first.body.equals(await fromPayoutsRead(subject, payload))).toBe(true);
      const second = await get(cached.base, path, B);
      expect(second.body.equals(first.body)).toBe(true);
    }
    // Kept: a change made behind payouts-read's back (no announcement) does not show through the gateway.
    await sql.query(`UPDATE payouts.balance SET available_micros = 999 WHERE agent_id = $1`, [B]);
    expect(JSON.parse((await fromPayoutsRead(RpcSubjects.payoutsBalanceGet, { agent_id: B })).toString()).balances[0].available_micros).toBe(999);
    expect((await json<{ balances: { available_micros: number }[] }>(cached.base, '/balance', B)).balances[0].available_micros).toBe(100);
  });

  it('shows a newer event on every route of the platform at the next request, and leaves other platforms cached', async () => {
    const before = new Map<string, Buffer>();
    for (const [path] of routes(A)) before.set(path, (await get(cached.base, path, A)).body);
    for (const [path] of routes(B)) await get(cached.base, path, B);

    // Newer versions of A's balance, readiness and newest statement (on every route of A).
    await publish('balance', balance(A, 2, 250));
    await publish('readiness', readiness(A, 2, 'complete'));
    await publish('statement', { ...statement(A, 39, 2, 77_777_777), status: 'PAID' });
    await applied();

    const balanceA = await json<{ balances: { available_micros: number }[] }>(cached.base, '/balance', A);
    expect(balanceA.balances[0].available_micros).toBe(250);
    expect(await json<{ setup_status: string }>(cached.base, '/readiness', A)).toMatchObject({ setup_status: 'complete' });
    const overview = await json<{ balances: { available_micros: number }[]; readiness: { setup_status: string }; latest_statement: { net_earnings_micros: number } }>(
      cached.base,
      '/overview',
      A,
    );
    expect([overview.balances[0].available_micros, overview.readiness.setup_status, overview.latest_statement.net_earnings_micros]).toEqual([250, 'complete', 77_777_777]);
    const page = await json<Page>(cached.base, '/statements?page_size=100', A);
    expect(page.items.find((s) => s.statement_id === `st_${A}_039`)).toMatchObject({ status: 'PAID', net_earnings_micros: 77_777_777 });
    expect(await json<{ net_earnings_micros: number }>(cached.base, `/statements/st_${A}_039`, A)).toMatchObject({ net_earnings_micros: 77_777_777 });
    const history = await json<Page>(cached.base, '/history', A);
    expect(history.items.find((s) => s.statement_id === `st_${A}_039`)).toMatchObject({ net_earnings_micros: 77_777_777 });
    // The PAID filter's second page now starts one statement later (st_039 became PAID).
    const paid = await json<Page>(cached.base, '/statements?status=PAID&page=2&page_size=5', A);
    expect(paid.total).toBe(JSON.parse(before.get('/statements?status=PAID&page=2&page_size=5')!.toString()).total + 1);
    // And every route equals what payouts-read answers now.
    for (const [path, subject, payload] of routes(A)) {
      const now = (await get(cached.base, path, A)).body;
      expect([path, now.equals(await fromPayoutsRead(subject, payload))]).toEqual([path, true]);
      expect([path, now.equals(before.get(path)!)]).toEqual([path, false]);
    }
    // B was not announced: its entries stayed (the change made behind payouts-read's back still does not show).
    expect((await json<{ balances: { available_micros: number }[] }>(cached.base, '/balance', B)).balances[0].available_micros).toBe(100);
  });

  it("never answers one platform with another's reply: the platform comes from the token and is part of the key", async () => {
    for (const [path] of routes(A)) {
      if (path.startsWith('/statements/')) continue; // ids are per platform
      const forA = await get(cached.base, path, A);
      const forB = await get(cached.base, path, B);
      expect([path, forA.body.equals(forB.body)]).toEqual([path, false]);
      expect(forA.body.toString()).not.toContain(B);
      expect(forB.body.toString()).not.toContain(A);
    }
    const pageB = await json<Page>(cached.base, '/statements?page_size=100', B);
    expect(pageB.items.length).toBe(STATEMENTS);
    expect(new Set(pageB.items.map((s) => s.agent_id))).toEqual(new Set([B]));
    // Another platform's statement id stays unknown, even with the owner's reply cached.
    expect((await get(cached.base, `/statements/st_${A}_039`, B)).status).toBe(404);
    // Equal queries written differently share an entry; the cache holds one per platform and key.
    const cache = cached.app.get(PayoutsReplyCache);
    const entries = cache.stats().entries;
    expect((await get(cached.base, '/statements?page=1&page_size=20', B)).body.equals((await get(cached.base, '/statements', B)).body)).toBe(true);
    expect(cache.stats().entries - entries).toBeLessThanOrEqual(1);
  });

  it('answers pages past the last one but never keeps them; the last page with statements is kept', async () => {
    const cache = cached.app.get(PayoutsReplyCache);
    // 40 statements: page 2 of 20 is the last with items, page 3 is past it.
    const last = await json<Page>(cached.base, '/history?page=2&page_size=20', B);
    expect(last.items).toHaveLength(20);
    const entries = cache.stats().entries;
    for (const path of ['/statements?page=3&page_size=20', '/history?page=3&page_size=20', '/statements?page=10000&page_size=100', '/statements?status=LOCKED&page=2&page_size=2']) {
      for (let i = 0; i < 2; i++) expect([path, await json<Page>(cached.base, path, B)]).toEqual([path, expect.objectContaining({ items: [] })]);
    }
    expect(cache.stats().entries).toBe(entries);
    // The page with statements is kept: a change behind payouts-read's back does not show.
    await sql.query(`UPDATE payouts.statement SET net_earnings_micros = 777 WHERE statement_id = $1`, [`st_${B}_019`]);
    expect((await json<Page>(cached.base, '/history?page=2&page_size=20', B)).items[0].net_earnings_micros).not.toBe(777);
    expect((await get(cached.base, '/statements?page=10001', B)).status).toBe(422);
  });

  it('compresses large replies (br, gzip) to bytes that decompress to the same JSON; small ones stay plain', async () => {
    const path = '/statements?page_size=100';
    const plain = await get(short.base, path, E);
    expect(plain.body.length).toBeGreaterThan(16 * 1024);
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(await fromPayoutsRead(RpcSubjects.payoutsStatementsList, { agent_id: E, page_size: 100 }))).toBe(true);

    const gzipped = await get(short.base, path, E, { 'accept-encoding': 'gzip' });
    expect([gzipped.headers['content-encoding'], gzipped.headers['content-type']]).toEqual(['gzip', 'application/json; charset=utf-8']);
    expect(gzipped.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(gzipped.headers['content-length'])).toBe(gzipped.body.length);
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 4);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);

    const brotli = await get(short.base, path, E, { 'accept-encoding': 'gzip, deflate, br' });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.body).equals(plain.body)).toBe(true);
    expect((await get(short.base, path, E, { 'accept-encoding': 'br;q=0.5, gzip' })).headers['content-encoding']).toBe('gzip');
    expect((await get(short.base, path, E, { 'accept-encoding': 'gzip;q=0, br;q=0' })).headers['content-encoding']).toBeUndefined();
    expect((await get(short.base, path, E, { 'accept-encoding': 'identity' })).body.equals(plain.body)).toBe(true);
    // Served twice from the cache: the same compressed bytes.
    expect((await get(short.base, path, E, { 'accept-encoding': 'gzip' })).body.equals(gzipped.body)).toBe(true);

    // Below PAYOUTS_CACHE_MIN_BYTES (16 KiB on this gateway): neither compressed nor kept.
    const small = await get(short.base, '/balance', E, { 'accept-encoding': 'gzip, br' });
    expect([small.status, small.headers['content-encoding'], small.headers.vary]).toEqual([200, undefined, undefined]);
    await sql.query(`UPDATE payouts.balance SET available_micros = 4242 WHERE agent_id = $1`, [E]);
    expect((await json<{ balances: { available_micros: number }[] }>(short.base, '/balance', E)).balances[0].available_micros).toBe(4242);
  });

  it('lets an entry go after PAYOUTS_CACHE_TTL_MS when no announcement comes', async () => {
    const path = '/statements?page_size=100';
    const before = await json<Page>(short.base, path, C);
    expect(before.items[0].net_earnings_micros).toBe(90_000_039);
    // Behind payouts-read's back: no announcement, only the TTL (1.5 s) can bring it.
    await sql.query(`UPDATE payouts.statement SET net_earnings_micros = 123 WHERE statement_id = $1`, [`st_${C}_039`]);
    await waitFor(async () => (await json<Page>(short.base, path, C)).items[0].net_earnings_micros === 123, { what: 'the entry to expire', timeoutMs: 20_000 });
  });

  it('flushes everything when the NATS connection is lost and comes back (announcements may have been missed)', async () => {
    const path = '/statements?page_size=100';
    expect((await json<Page>(cached.base, path, D)).items[0].net_earnings_micros).toBe(90_000_039);
    await sql.query(`UPDATE payouts.statement SET net_earnings_micros = 456 WHERE statement_id = $1`, [`st_${D}_039`]);
    // Kept (60 s TTL, nothing announced).
    expect((await json<Page>(cached.base, path, D)).items[0].net_earnings_micros).toBe(90_000_039);
    const cache = cached.app.get(PayoutsReplyCache);
    expect(cache.stats().entries).toBeGreaterThan(0);

    await stack.nats.restart();
    // Well within the 60 s TTL: only the flush on disconnect/reconnect explains the new value.
    await waitFor(
      async () => {
        const response = await get(cached.base, path, D);
        return response.status === 200 && (JSON.parse(response.body.toString()) as Page).items[0].net_earnings_micros === 456;
      },
      { what: 'the gateway to fetch again after the reconnect', timeoutMs: 20_000, intervalMs: 200 },
    );
    // The test's own connection reconnects on its own schedule: the tests after this one
    // announce through it (a flush while it is still away rejects "connection disconnected").
    await waitFor(() => client.connection.flush().then(() => true, () => undefined), { what: "the test's connection back", timeoutMs: 20_000, intervalMs: 100 });
  });
});

describe('PayoutsReplyCache', () => {
  let cache: PayoutsReplyCache;
  let cacheNats: NatsClient;
  const env = (extra: Record<string, string> = {}) =>
    loadEnv(GatewayEnv, { NATS_URL: stack.nats.url, PAYOUTS_CACHE_TTL_MS: '60000', PAYOUTS_CACHE_MIN_BYTES: '0', ...extra });

  beforeAll(async () => {
    cacheNats = await NatsClient.connect({ servers: [stack.nats.url], name: 'reply-cache-test' });
  });
  afterEach(() => cache?.beforeApplicationShutdown());
  afterAll(async () => {
    await cacheNats?.drain();
  });

  /** A cache on its own connection, subscribed once this resolves (the server has its SUB). */
  async function start(extra?: Record<string, string>): Promise<PayoutsReplyCache> {
    cache = new PayoutsReplyCache(cacheNats, env(extra), testLogger('gateway'));
    cache.onModuleInit();
    await cacheNats.connection.flush();
    return cache;
  }

  /** An announcement from another connection, processed by the cache's connection when this resolves. */
  async function announce(agentIds: string[]): Promise<void> {
    client.connection.publish(BroadcastSubjects.payoutsChanged, JSON.stringify({ agent_ids: agentIds }));
    await client.connection.flush();
    await cacheNats.connection.flush();
  }

  const body = (text: string) => async () => Buffer.from(text);

  it('does not keep a reply fetched across an announcement of its platform (it may predate the change)', async () => {
    await start();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inFlight = cache.reply('agent_race', 'k', async () => {
      await gate;
      return Buffer.from('old');
    });
    await announce(['agent_race']);
    release();
    expect((await inFlight).body.toString()).toBe('old');
    expect(cache.stats().entries).toBe(0);
    expect((await cache.reply('agent_race', 'k', body('new'))).body.toString()).toBe('new');
    expect((await cache.reply('agent_race', 'k', body('newer'))).body.toString()).toBe('new');
    // An announcement for another platform changes nothing here.
    await announce(['agent_other']);
    expect((await cache.reply('agent_race', 'k', body('newest'))).body.toString()).toBe('new');
    await announce(['agent_race']);
    expect((await cache.reply('agent_race', 'k', body('newest'))).body.toString()).toBe('newest');
  });

  it('shares one fetch between concurrent misses, but not with a request that comes after an announcement', async () => {
    await start();
    let fetches = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = async () => {
      const n = ++fetches;
      await gate;
      return Buffer.from(`v${n}`);
    };
    const first = cache.reply('agent_share', 'k', slow);
    const second = cache.reply('agent_share', 'k', slow);
    await announce(['agent_share']);
    const third = cache.reply('agent_share', 'k', slow);
    release();
    expect((await Promise.all([first, second, third])).map((r) => r.body.toString())).toEqual(['v1', 'v1', 'v2']);
    expect(fetches).toBe(2);
    // Only the fetch that began after the announcement was kept.
    expect((await cache.reply('agent_share', 'k', body('x'))).body.toString()).toBe('v2');
  });

  it('keeps no list page past the last one (an empty page beyond page 1); other replies alike are kept', async () => {
    await start();
    const empty = (page: number) => body(JSON.stringify({ items: [], page, page_size: 20, total: 3 }));
    expect((await cache.reply('agent_pages', 'p5', empty(5), { list: true })).body.toString()).toContain('"page":5');
    expect(cache.stats().entries).toBe(0);
    await cache.reply('agent_pages', 'p1', empty(1), { list: true }); // a platform without statements: page 1 is bounded
    await cache.reply('agent_pages', 'p2', body(JSON.stringify({ items: [{ statement_id: 's' }], page: 2, page_size: 20, total: 21 })), { list: true });
    await cache.reply('agent_pages', 'not-a-list', empty(5));
    expect(cache.stats().entries).toBe(3);
  });

  it('never caches failures', async () => {
    await start();
    await expect(cache.reply('agent_fail', 'k', () => Promise.reject(new Error('payouts-read down')))).rejects.toThrow('payouts-read down');
    expect((await cache.reply('agent_fail', 'k', body('ok'))).body.toString()).toBe('ok');
  });

  it('holds at most PAYOUTS_CACHE_MAX_BYTES (bodies, keys and per-entry overhead), least recently used out first', async () => {
    // Room for three 1000-byte replies with their keys and overhead (each key is as long as 'agent_lru\0a').
    const entryBytes = 1000 + Buffer.byteLength('agent_lru\u0000a') + ENTRY_OVERHEAD_BYTES;
    const budget = 3 * entryBytes;
    await start({ PAYOUTS_CACHE_MAX_BYTES: String(budget) });
    const kb = (c: string) => async () => Buffer.alloc(1000, c);
    await cache.reply('agent_lru', 'a', kb('a'));
    await cache.reply('agent_lru', 'b', kb('b'));
    await cache.reply('agent_lru', 'c', kb('c'));
    expect(cache.stats()).toMatchObject({ entries: 3, bytes: budget });
    await cache.reply('agent_lru', 'a', kb('A')); // a hit: a is now the most recent
    await cache.reply('agent_lru', 'd', kb('d')); // evicts b, the least recently used
    expect(cache.stats()).toMatchObject({ entries: 3, bytes: budget });
    expect((await cache.reply('agent_lru', 'a', kb('A'))).body[0]).toBe('a'.charCodeAt(0));
    expect((await cache.reply('agent_lru', 'b', kb('B'))).body[0]).toBe('B'.charCodeAt(0));
    // A reply larger than the whole budget passes through unkept.
    await cache.reply('agent_lru', 'huge', async () => Buffer.alloc(5000));
    expect(cache.stats().bytes).toBeLessThanOrEqual(budget);
    // Compressed forms count too.
    const kept = await cache.reply('agent_lru', 'c', kb('c'));
    await kept.encoded('gzip');
    await waitFor(() => cache.stats().bytes > 0 && cache.stats().bytes <= budget, { what: 'the budget to hold' });
  });

  it('flushes everything on an announcement it cannot read', async () => {
    await start();
    await cache.reply('agent_flush', 'k', body('kept'));
    client.connection.publish(BroadcastSubjects.payoutsChanged, 'not json');
    await client.connection.flush();
    await cacheNats.connection.flush();
    expect(cache.stats().entries).toBe(0);
  });

  it('keeps nothing with PAYOUTS_CACHE_TTL_MS=0', async () => {
    await start({ PAYOUTS_CACHE_TTL_MS: '0' });
    await cache.reply('agent_off', 'k', body('one'));
    expect((await cache.reply('agent_off', 'k', body('two'))).body.toString()).toBe('two');
    expect(cache.stats().entries).toBe(0);
  });
});
