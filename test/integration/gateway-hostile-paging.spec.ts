import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { QueueGroups, RpcSubjects } from '#libs/contracts';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { metricValue, startService, type ServiceProcess } from '../faults/support/services.js';
import { REDIS_URL, newTestDatabase, payoutStatementEvent, startNats, type TestDatabase, type TestNats } from '../support/index.js';
import { TEST_AUDIENCE, TEST_ISSUER, generateTestKey, signIdToken, writeJwksFile } from '../support/oidc.js';

/**
 * Bounded memory under hostile paging (issue 12 item 7): a signed-in owner walks 100,000
 * distinct pages of /agent-payouts/me/statements (page 1–10,000 × page_size 1–10; the platform
 * has 3 statements, so nearly all are past the last page). The gateway runs as Kubernetes runs
 * it (node dist/…/main.js, with a 128 MB old-space bound as a container's memory limit gives
 * Node); its resident memory is sampled from /proc while autocannon sends the pages over 64
 * connections. payouts-read is stood in for by a NATS responder in its queue group that answers
 * each page as payouts-read would (its own caching of such pages: payouts-cache.spec.ts), so the
 * walk measures the gateway and stays short. Every page is answered (200), the pages past the
 * last one are not cached (the cache's byte gauge stays small), and the gateway's RSS stays
 * under 300 MB.
 */
const PAGES = 100_000;
const PAGE_NUMBERS = 10_000;
const RSS_LIMIT_BYTES = 300 * 1024 * 1024;
const HEAP_LIMIT_MB = 128;
const AGENT = 'agent_paging';
const OWNER = 'uid_paging';

interface AutocannonResult {
  requests: { total: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon ships CommonJS without types (bench/harness.ts reads it the same way).
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const STATEMENTS = [3, 2, 1].map((n) => {
  const { version: _version, ...statement } = payoutStatementEvent(AGENT, n);
  return statement;
});

let nats: TestNats;
let db: TestDatabase;
let identityDb: DataSource;
let responder: NatsConnection;
let gateway: ServiceProcess;
let token: string;

/** Answers payouts.v1.statements.list as payouts-read does: `{items, page, page_size, total}`, newest first. */
async function standInForPayoutsRead(url: string): Promise<NatsConnection> {
  const connection = await connect({ servers: url, name: 'payouts-read-stand-in' });
  const encoder = new TextEncoder();
  connection.subscribe(RpcSubjects.payoutsStatementsList, {
    queue: QueueGroups.payouts,
    callback: (_error, msg) => {
      const { page = 1, page_size = 20 } = msg.json<{ page?: number; page_size?: number }>();
      const items = STATEMENTS.slice((page - 1) * page_size, page * page_size);
      msg.respond(encoder.encode(JSON.stringify({ ok: true, result: { items, page, page_size, total: STATEMENTS.length } })));
    },
  });
  await connection.flush();
  return connection;
}

beforeAll(async () => {
  nats = await startNats();
  db = newTestDatabase();
  const key = await generateTestKey('ES256');
  const jwksFile = await writeJwksFile([key]);
  responder = await standInForPayoutsRead(nats.url);
  gateway = await startService(
    'gateway',
    {
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      REDIS_URL,
      OIDC_ISSUER: TEST_ISSUER,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      OIDC_JWKS_URL: jwksFile,
      // The walk is one owner's 100,000 requests in well under a minute: its rate limit is not what is tested here.
      RATE_LIMIT_PER_TOKEN_PER_MINUTE: 0,
      TRACKING_SIGNING_SECRET: 'hostile-paging-test-tracking-secret',
      // A heap bound, as a container's memory limit gives Node: V8 then collects garbage instead
      // of letting the heap grow lazily, so the RSS shows what the gateway keeps. Pages kept
      // without bound would fill this heap and end the process.
      NODE_OPTIONS: `--max-old-space-size=${HEAP_LIMIT_MB}`,
    },
    { ready: 'ready' },
  );
  identityDb = createIdentityDataSource(db.url, 2, 'hostile-paging-test');
  await identityDb.initialize();
  await new IdentityRepository(identityDb).createPlatform(AGENT, OWNER);
  token = await signIdToken(key, { sub: OWNER, role: 'agent' });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await responder?.close();
  if (identityDb?.isInitialized) await identityDb.destroy();
  await nats?.stop();
  await db?.drop();
});

/** The resident set of a process, from /proc (Linux). */
async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}

it(`answers ${PAGES.toLocaleString('en')} distinct pages with the gateway's RSS under 300 MB, caching none past the last page`, async () => {
  const rssBefore = await rssBytes(gateway.pid);
  let peak = rssBefore;
  const sampler = setInterval(() => {
    void rssBytes(gateway.pid).then((rss) => (peak = Math.max(peak, rss)), () => undefined);
  }, 200);
  let sent = 0;
  let result: AutocannonResult;
  try {
    result = await autocannon({
      url: gateway.url,
      connections: 64,
      amount: PAGES,
      timeout: 20,
      headers: { authorization: `Bearer ${token}` },
      requests: [
        {
          method: 'GET',
          // Page n: page 1–10,000, then the next page size — 100,000 distinct queries.
          setupRequest: (request: Record<string, unknown>) => {
            const n = sent++;
            return { ...request, path: `/agent-payouts/me/statements?page=${(n % PAGE_NUMBERS) + 1}&page_size=${Math.floor(n / PAGE_NUMBERS) + 1}` };
          },
        },
      ],
    });
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, await rssBytes(gateway.pid));
  process.stderr.write(
    `[hostile-paging] ${result.requests.total} requests, ${result['2xx']} 2xx; gateway RSS ${(rssBefore / 2 ** 20).toFixed(0)} MB before, peak ${(peak / 2 ** 20).toFixed(0)} MB\n`,
  );

  expect({ total: result.requests.total, ok: result['2xx'], non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }).toEqual({
    total: PAGES,
    ok: PAGES,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
  });
  expect(sent).toBeGreaterThanOrEqual(PAGES);
  expect(peak).toBeLessThan(RSS_LIMIT_BYTES);
  // Only the few pages with statements were kept: the cache holds kilobytes, not 100,000 empty pages.
  const metrics = await gateway.metrics();
  expect(metricValue(metrics, 'weave_gateway_payout_cache_bytes')).toBeLessThan(64 * 1024);
  expect(metricValue(metrics, 'weave_gateway_payout_cache_total', { outcome: 'miss' })).toBeGreaterThanOrEqual(PAGES);
  // A page with statements is answered with them, and kept (within PAYOUTS_CACHE_TTL_MS).
  const hits = metricValue(metrics, 'weave_gateway_payout_cache_total', { outcome: 'hit' });
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`${gateway.url}/agent-payouts/me/statements?page=2&page_size=2`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await response.json()) as { items: { statement_id: string }[] }).items.map((s) => s.statement_id)).toEqual([STATEMENTS[2].statement_id]);
  }
  expect(metricValue(await gateway.metrics(), 'weave_gateway_payout_cache_total', { outcome: 'hit' })).toBe(hits + 1);
  // Above 10,000 a page is refused before any work.
  expect((await fetch(`${gateway.url}/agent-payouts/me/statements?page=10001`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(422);
}, 300_000);
