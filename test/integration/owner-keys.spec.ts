import pg from 'pg';
import type { IdentityRepository } from '#libs/identity';
import {
  capturingLogger,
  expectProblem,
  seedPlatform,
  startGateway,
  startIdentityProvider,
  startReportingProjection,
  useTestStack,
  waitFor,
  type TestGateway,
} from '../support/index.js';
import { signIdToken, type TestKey } from '../support/oidc.js';

/**
 * The owner's API keys (DESIGN §7) over real HTTP through two gateway replicas sharing one
 * identity database and nats-server, with the real reporting-projection behind them and a real
 * JWKS server: the whole key lifecycle, the 401/403/404/409/413/415/422 answers, the per-owner
 * limit, race-safe under concurrency, and no secret in any log line or table row.
 */

const stack = useTestStack();
let identity: IdentityRepository;
let sql: pg.Client;
const replicas: (TestGateway & { lines: string[] })[] = [];
let signing: TestKey;
let a: string;
let b: string;
const tokens: Record<string, string> = {};
/** Every secret this file saw: none may appear in a log line or a table row. */
const secrets: string[] = [];

const OWNER_ROUTES: [string, string][] = [
  ['GET', '/agent/keys'],
  ['POST', '/agent/keys'],
  ['DELETE', '/agent/keys/key_00000000000000000000'],
  ['GET', '/agent/dashboard/reporting'],
  ['GET', '/agent/dashboard/reporting/series'],
];

beforeAll(async () => {
  const idp = await startIdentityProvider(stack, ['ES256']);
  signing = idp.key;
  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 500 }));
  // Replica A writes its key uses every 200 ms; B only at shutdown (its interval is the longest allowed).
  for (const interval of ['200', '50000']) {
    const { logger, lines } = capturingLogger('gateway');
    const gateway = await startGateway(stack, {
      jwksUrl: idp.jwks.url,
      logger,
      extra: { KEY_USAGE_FLUSH_INTERVAL_MS: interval, RATE_LIMIT_PER_TOKEN_PER_MINUTE: '100000' },
    });
    replicas.push({ ...gateway, lines });
  }
  [a, b] = replicas.map((r) => r.base);
  ({ identity } = await seedPlatform(stack, 'agent_keys_a', { owner: 'uid_keys_a', keys: [] }));
  await seedPlatform(stack, 'agent_keys_b', { owner: 'uid_keys_b', keys: [] });
  await seedPlatform(stack, 'agent_keys_s', { owner: 'uid_keys_s', keys: [] });
  await identity.setStatus('agent_keys_s', 'suspended');
  for (const [name, sub] of [['a', 'uid_keys_a'], ['b', 'uid_keys_b'], ['s', 'uid_keys_s'], ['nobody', 'uid_keys_nobody']]) {
    tokens[name] = await signIdToken(signing, { sub });
  }
  sql = new pg.Client({ connectionString: stack.db.url });
  await sql.connect();
  stack.atEnd(() => sql.end());
});

function call(base: string, method: string, path: string, credential: string | null, body?: unknown, contentType = 'application/json'): Promise<Response> {
  const headers: Record<string, string> = {};
  if (credential !== null) headers.authorization = `Bearer ${credential}`;
  if (body !== undefined) headers['content-type'] = contentType;
  return fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
}

async function createKey(base: string, token: string, body: unknown): Promise<Record<string, string>> {
  const response = await call(base, 'POST', '/agent/keys', token, body);
  expect(response.status).toBe(201);
  const created = (await response.json()) as Record<string, string>;
  secrets.push(created.api_key);
  return created;
}

async function listKeys(base: string, token: string): Promise<Record<string, string | null>[]> {
  const response = await call(base, 'GET', '/agent/keys', token);
  expect(response.status).toBe(200);
  expect(response.headers.get('cache-control')).toBe('no-store');
  return ((await response.json()) as { items: Record<string, string | null>[] }).items;
}

/** A request with the API key to an API-key route: the key works when it is not a 401. */
const useKey = (base: string, key: string) => call(base, 'GET', '/agent/reporting?time_range=today', key);

describe('key lifecycle through two gateway replicas', () => {
  it('creates a key whose secret works at once, lists it with last4 and last_used_at, revokes it everywhere within 1 s', async () => {
    const created = await createKey(a, tokens.a, { mode: 'live', name: 'Production chat' });
    expect(Object.keys(created).sort()).toEqual(['api_key', 'created_at', 'key_id', 'mode', 'name']);
    expect(created).toMatchObject({ mode: 'live', name: 'Production chat', key_id: expect.stringMatching(/^key_[0-9A-Za-z]{20}$/), api_key: expect.stringMatching(/^sk_live_[0-9A-Za-z]{40}$/) });
    expect(Math.abs(Date.parse(created.created_at) - Date.now())).toBeLessThan(60_000);

    // It works at once, on the other replica too.
    const usedAt = Date.now();
    expect((await useKey(b, created.api_key)).status).not.toBe(401);
    expect((await useKey(a, created.api_key)).status).not.toBe(401);

    // Replica B has not written its use yet (it writes at shutdown) but shows it; A's use reaches B's list once A flushes.
    const onB = (await listKeys(b, tokens.a)).find((k) => k.key_id === created.key_id)!;
    expect(onB).toEqual({
      key_id: created.key_id,
      name: 'Production chat',
      mode: 'live',
      last4: created.api_key.slice(-4),
      created_at: created.created_at,
      last_used_at: expect.any(String),
      revoked_at: null,
    });
    expect(Math.abs(Date.parse(onB.last_used_at!) - usedAt)).toBeLessThan(60_000);
    const stored = await waitFor(
      async () => (await sql.query('SELECT last_used_at FROM identity.api_key WHERE key_id = $1', [created.key_id])).rows[0]?.last_used_at ?? undefined,
      { timeoutMs: 5000, what: 'replica A to write the use' },
    );
    expect(Math.abs(stored.getTime() - usedAt)).toBeLessThan(60_000);
    const onA = (await listKeys(a, tokens.a)).find((k) => k.key_id === created.key_id)!;
    expect(onA.last_used_at).not.toBeNull();

    // Revoked through A, refused by B (which has the key in its cache) within a second.
    const revokedAt = Date.now();
    const revoke = await call(a, 'DELETE', `/agent/keys/${created.key_id}`, tokens.a);
    expect(revoke.status).toBe(204);
    expect(await revoke.text()).toBe('');
    await waitFor(async () => (await useKey(b, created.api_key)).status === 401, { timeoutMs: 1000, intervalMs: 20, what: 'replica B to refuse the revoked key' });
    expect(Date.now() - revokedAt).toBeLessThan(1000);
    expect((await useKey(a, created.api_key)).status).toBe(401);

    // Listed as revoked; revoking again is still 204 and changes nothing.
    const revoked = (await listKeys(a, tokens.a)).find((k) => k.key_id === created.key_id)!;
    expect(revoked.revoked_at).not.toBeNull();
    expect((await call(b, 'DELETE', `/agent/keys/${created.key_id}`, tokens.a)).status).toBe(204);
    expect((await listKeys(b, tokens.a)).find((k) => k.key_id === created.key_id)!.revoked_at).toBe(revoked.revoked_at);

    // The audit trail: created and revoked by the owner's sub, once each.
    const audit = await identity.keyAudit('agent_keys_a');
    expect(audit.filter((e) => e.key_id === created.key_id).map(({ action, actor, actor_sub, mode, name }) => ({ action, actor, actor_sub, mode, name }))).toEqual([
      { action: 'created', actor: 'owner', actor_sub: 'uid_keys_a', mode: 'live', name: 'Production chat' },
      { action: 'revoked', actor: 'owner', actor_sub: 'uid_keys_a', mode: 'live', name: 'Production chat' },
    ]);
  });

  it('lists newest first with revoked keys, ops keys with a null name, never a secret or hash', async () => {
    const opsKey = await identity.createKey('agent_keys_a', 'test');
    secrets.push(opsKey.api_key);
    const owned = await createKey(b, tokens.a, { mode: 'test', name: 'Staging ✓ 東京' });
    const items = await listKeys(a, tokens.a);
    expect(items[0].key_id).toBe(owned.key_id);
    expect(items[1]).toMatchObject({ key_id: opsKey.key_id, name: null, mode: 'test', last4: opsKey.api_key.slice(-4), last_used_at: null, revoked_at: null });
    const createdAts = items.map((k) => Date.parse(k.created_at!));
    expect([...createdAts].sort((x, y) => y - x)).toEqual(createdAts);
    for (const item of items) expect(Object.keys(item).sort()).toEqual(['created_at', 'key_id', 'last4', 'last_used_at', 'mode', 'name', 'revoked_at']);
    // Another platform's owner sees none of them.
    expect((await listKeys(a, tokens.b)).map((k) => k.key_id)).not.toContain(owned.key_id);
  });

  it("answers 404 for another platform's key, an unknown key and a malformed id, and revokes nothing", async () => {
    const other = await identity.createKey('agent_keys_b', 'live');
    secrets.push(other.api_key);
    for (const id of [other.key_id, 'key_00000000000000000000', 'not-a-key-id', 'key_%F0%9F%92%A9']) {
      const body = await expectProblem(await call(a, 'DELETE', `/agent/keys/${id}`, tokens.a), 404, /key-not-found$/);
      expect(body.detail).toBe('No API key with this id exists for this platform.');
    }
    expect((await useKey(a, other.api_key)).status).not.toBe(401);
    expect((await sql.query('SELECT revoked_at FROM identity.api_key WHERE key_id = $1', [other.key_id])).rows[0].revoked_at).toBeNull();
  });

  it('stops at 409 at the 21st unrevoked key, also when 30 creations race over both replicas', async () => {
    await identity.createPlatform('agent_keys_limit', 'uid_keys_limit');
    const token = await signIdToken(signing, { sub: 'uid_keys_limit' });
    const attempts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(i % 2 ? a : b, 'POST', '/agent/keys', token, { mode: i % 3 ? 'live' : 'test', name: `key ${i}` })),
    );
    const statuses = attempts.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 409)).toHaveLength(10);
    for (const response of attempts) {
      if (response.status === 201) secrets.push(((await response.json()) as { api_key: string }).api_key);
      else await expectProblem(response, 409, /key-limit-reached$/);
    }
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM identity.api_key WHERE agent_id = 'agent_keys_limit' AND revoked_at IS NULL`);
    expect(rows[0].n).toBe(20);
    // A revoked key makes room for one more.
    const [first] = await listKeys(a, token);
    expect((await call(a, 'DELETE', `/agent/keys/${first.key_id}`, token)).status).toBe(204);
    secrets.push((await createKey(b, token, { mode: 'live', name: 'the 20th again' })).api_key);
    await expectProblem(await call(a, 'POST', '/agent/keys', token, { mode: 'live', name: 'one too many' }), 409, /key-limit-reached$/);
  });
});

describe('who may call the owner routes', () => {
  it('answers 401 to an API key, no token, a token of no owner, on every owner route', async () => {
    const apiKey = await identity.createKey('agent_keys_a', 'live');
    secrets.push(apiKey.api_key);
    for (const [method, path] of OWNER_ROUTES) {
      for (const credential of [apiKey.api_key, null, tokens.nobody]) {
        const body = method === 'POST' ? { mode: 'live', name: 'x' } : undefined;
        const response = await call(a, method, path, credential, body);
        await expectProblem(response, 401, /invalid-id-token$/);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
  });

  it('answers 403 to the owner of a suspended platform on every owner route, before looking at the input', async () => {
    for (const [method, path] of OWNER_ROUTES) {
      await expectProblem(await call(b, method, `${path}${path.includes('?') ? '&' : '?'}bogus=1`, tokens.s, method === 'POST' ? { bogus: true } : undefined), 403, /account-unavailable$/);
    }
  });
});

describe('bad input', () => {
  it.each([
    ['a control character in the name', { mode: 'live', name: 'bad\u0007name' }, /control characters/],
    ['a line break in the name', { mode: 'live', name: 'two\nlines' }, /control characters/],
    ['a bidirectional override', { mode: 'live', name: 'abc\u202Egnp.exe' }, /bidirectional/],
    ['a name of 65 characters', { mode: 'live', name: 'n'.repeat(65) }, /at most 64 characters/],
    ['a blank name', { mode: 'live', name: '   ' }, /not blank/],
    ['an empty name', { mode: 'live', name: '' }, /1–64 characters/],
    ['a name that is not a string', { mode: 'live', name: 42 }, /name must be a string/],
    ['no name', { mode: 'live' }, /name is required/],
    ['an unknown mode', { mode: 'prod', name: 'x' }, /Unsupported mode "prod"/],
    ['an extra field', { mode: 'live', name: 'x', agent_id: 'agent_keys_b' }, /Unsupported field "agent_id"/],
    ['an array', [{ mode: 'live', name: 'x' }], /JSON object/],
  ])('refuses %s with 422', async (_what, body, detail) => {
    const response = await call(a, 'POST', '/agent/keys', tokens.a, body);
    expect((await expectProblem(response, 422, /invalid-body$/)).detail).toMatch(detail);
  });

  it('accepts a name of exactly 64 characters (code points, emoji included)', async () => {
    const name = '😀'.repeat(64);
    const created = await createKey(a, tokens.a, { mode: 'test', name });
    expect(created.name).toBe(name);
    expect((await call(a, 'DELETE', `/agent/keys/${created.key_id}`, tokens.a)).status).toBe(204);
  });

  it('answers 415 to a body that is not JSON, 413 to one over the limit, 400 to malformed JSON, 422 to a query parameter', async () => {
    await expectProblem(await call(a, 'POST', '/agent/keys', tokens.a, 'mode=live&name=x', 'application/x-www-form-urlencoded'), 415, /unsupported-media-type$/);
    // The details the OpenAPI examples show.
    expect((await expectProblem(await call(a, 'POST', '/agent/keys', tokens.a, { mode: 'live', name: 'x'.repeat(70_000) }), 413, /payload-too-large$/)).detail).toBe('Request body is too large');
    expect((await expectProblem(await call(a, 'POST', '/agent/keys', tokens.a, '{"mode": "live", "name": '), 400, /bad-request$/)).detail).toBe(
      "Body is not valid JSON but content-type is set to 'application/json'",
    );
    await expectProblem(await call(a, 'GET', '/agent/keys?agent_id=agent_keys_b', tokens.a), 422, /invalid-query$/);
    await expectProblem(await call(a, 'DELETE', '/agent/keys/key_00000000000000000000?force=1', tokens.a), 422, /invalid-query$/);
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM identity.api_key WHERE name = 'x'`);
    expect(rows[0].n).toBe(0);
  });
});

describe('secrets', () => {
  it('writes a use seen only by replica B when B shuts down', async () => {
    const created = await createKey(a, tokens.a, { mode: 'live', name: 'used on B only' });
    expect((await useKey(b, created.api_key)).status).not.toBe(401);
    expect((await sql.query('SELECT last_used_at FROM identity.api_key WHERE key_id = $1', [created.key_id])).rows[0].last_used_at).toBeNull();
    await replicas[1].close();
    const { rows } = await sql.query('SELECT last_used_at FROM identity.api_key WHERE key_id = $1', [created.key_id]);
    expect(rows[0].last_used_at).toBeInstanceOf(Date);
  });

  it('appear in no log line of either replica and in no row of any table (only their hash)', async () => {
    expect(secrets.length).toBeGreaterThan(25);
    const lines = replicas.flatMap((r) => r.lines);
    // The replicas logged at trace level: requests, key creations and revocations are there.
    expect(lines.some((line) => line.includes('API key created by its owner'))).toBe(true);
    for (const secret of secrets) {
      const random = secret.slice('sk_live_'.length);
      expect(lines.filter((line) => line.includes(random))).toEqual([]);
    }
    // A pg_dump-like scan: every row of every table of every schema, as text.
    const { rows: tables } = await sql.query(
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    expect(tables.map((t) => `${t.table_schema}.${t.table_name}`)).toEqual(expect.arrayContaining(['identity.api_key', 'identity.api_key_audit']));
    let scanned = 0;
    for (const { table_schema, table_name } of tables) {
      const { rows } = await sql.query(`SELECT t::text AS row FROM "${table_schema}"."${table_name}" t`);
      scanned += rows.length;
      for (const secret of secrets) {
        const random = secret.slice('sk_live_'.length);
        expect({ table: `${table_schema}.${table_name}`, leaks: rows.filter((r) => r.row.includes(random)).length }).toEqual({ table: `${table_schema}.${table_name}`, leaks: 0 });
      }
    }
    expect(scanned).toBeGreaterThan(secrets.length);
  });
});
