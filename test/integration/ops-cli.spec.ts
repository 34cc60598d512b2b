import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import pg from 'pg';
import { BroadcastSubjects } from '#libs/contracts';
import { freePort, newTestDatabase, startNats, waitFor, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * The ops CLI of DESIGN §3 as a child process (the built dist/, so run `npm run build` first;
 * `npm test` does), against this file's private database and nats-server.
 */
const CLI = resolve('dist/apps/ops/src/main.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let nats: TestNats;
let db: TestDatabase;
let bus: NatsConnection;
let broadcasts: Subscription;
const received: unknown[] = [];
let client: pg.Client;

function ops(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, DATABASE_URL: db.url, NATS_URL: nats.url, ...env }, timeout: 30000 },
      (error, stdout, stderr) => done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Exit 0 and exactly one JSON object (one line) on stdout. */
async function opsJson(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const run = await ops(args, env);
  if (run.code !== 0) throw new Error(`ops ${args.join(' ')} failed (${run.code}): ${run.stderr}`);
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(run.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function expectFailure(args: string[], code: number, message: RegExp): Promise<void> {
  const run = await ops(args);
  expect(run.code).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  nats = await startNats();
  db = newTestDatabase();
  bus = await connect({ servers: nats.url });
  broadcasts = bus.subscribe(BroadcastSubjects.identityChanged, {
    callback: (_err, msg) => {
      received.push(JSON.parse(new TextDecoder().decode(msg.data)));
    },
  });
  await bus.flush();
});

afterAll(async () => {
  broadcasts?.unsubscribe();
  await bus?.close();
  await client?.end();
  await nats?.stop();
  await db?.drop();
});

describe('ops CLI', () => {
  it('creates a platform (creating database, schema and tables) and is idempotent', async () => {
    expect(await opsJson(['platform', 'create', '--agent-id', 'agent_ops', '--owner-uid', 'uid_1'])).toEqual({
      agent_id: 'agent_ops',
      owner_uid: 'uid_1',
      status: 'active',
    });
    expect(await opsJson(['platform', 'create', '--agent-id', 'agent_ops', '--owner-uid', 'uid_1'])).toEqual({
      agent_id: 'agent_ops',
      owner_uid: 'uid_1',
      status: 'active',
    });
    // Without --owner-uid the recorded owner stays.
    expect(await opsJson(['platform', 'create', '--agent-id', 'agent_ops'])).toEqual({ agent_id: 'agent_ops', owner_uid: 'uid_1', status: 'active' });
    await waitFor(() => received.length >= 3, { timeoutMs: 5000, what: 'identity broadcasts' });
    expect(received[0]).toEqual({ agent_id: 'agent_ops' });

    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query('SELECT count(*)::int AS n FROM identity.platform');
    expect(rows[0].n).toBe(1);
  });

  it('records an owner on a platform that had none, and refuses to change it', async () => {
    expect(await opsJson(['platform', 'create', '--agent-id', 'agent_noowner'])).toEqual({ agent_id: 'agent_noowner', owner_uid: null, status: 'active' });
    expect(await opsJson(['platform', 'create', '--agent-id', 'agent_noowner', '--owner-uid', 'uid_2'])).toMatchObject({ owner_uid: 'uid_2' });
    await expectFailure(['platform', 'create', '--agent-id', 'agent_noowner', '--owner-uid', 'uid_other'], 1, /different owner/);
  });

  it('suspends and activates a platform', async () => {
    expect(await opsJson(['platform', 'suspend', '--agent-id', 'agent_ops'])).toEqual({ agent_id: 'agent_ops', status: 'suspended' });
    expect(await opsJson(['platform', 'suspend', '--agent-id', 'agent_ops'])).toEqual({ agent_id: 'agent_ops', status: 'suspended' });
    // create does not silently reactivate a suspended platform
    expect(await opsJson(['platform', 'create', '--agent-id', 'agent_ops'])).toMatchObject({ status: 'suspended' });
    expect(await opsJson(['platform', 'activate', '--agent-id', 'agent_ops'])).toEqual({ agent_id: 'agent_ops', status: 'active' });
    await expectFailure(['platform', 'suspend', '--agent-id', 'agent_missing'], 1, /no platform/);
    await expectFailure(['platform', 'activate', '--agent-id', 'agent_missing'], 1, /no platform/);
  });

  it('creates live and test keys, storing only their hash', async () => {
    const live = await opsJson(['key', 'create', '--agent-id', 'agent_ops', '--mode', 'live']);
    const test = await opsJson(['key', 'create', '--agent-id', 'agent_ops', '--mode', 'test']);
    expect(Object.keys(live).sort()).toEqual(['api_key', 'key_id', 'mode']);
    expect(live).toMatchObject({ mode: 'live', key_id: expect.stringMatching(/^key_[0-9A-Za-z]{20}$/), api_key: expect.stringMatching(/^sk_live_[0-9A-Za-z]{40}$/) });
    expect(test).toMatchObject({ mode: 'test', api_key: expect.stringMatching(/^sk_test_[0-9A-Za-z]{40}$/) });

    const { rows } = await client.query('SELECT key_id, agent_id, mode, secret_hash, revoked_at, row_to_json(k)::text AS everything FROM identity.api_key k WHERE key_id = $1', [live.key_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ agent_id: 'agent_ops', mode: 'live', revoked_at: null });
    expect(Buffer.compare(rows[0].secret_hash, createHash('sha256').update(String(live.api_key)).digest())).toBe(0);
    const secret = String(live.api_key);
    const { rows: leaks } = await client.query(
      `SELECT count(*)::int AS n FROM identity.api_key k
        WHERE position($1 in row_to_json(k)::text) > 0 OR position(convert_to($1, 'UTF8') in secret_hash) > 0`,
      [secret.slice('sk_live_'.length)],
    );
    expect(leaks[0].n).toBe(0);
    expect(rows[0].everything).not.toContain(secret);

    await waitFor(() => received.some((m) => (m as { key_id?: string }).key_id === live.key_id), { timeoutMs: 5000, what: 'key broadcast' });
    expect(received).toContainEqual({ agent_id: 'agent_ops', key_id: live.key_id });
  });

  it('refuses a key for an unknown platform', async () => {
    await expectFailure(['key', 'create', '--agent-id', 'agent_missing', '--mode', 'live'], 1, /no platform with agent id agent_missing/);
  });

  it('revokes a key (idempotently) and refuses an unknown key', async () => {
    const key = await opsJson(['key', 'create', '--agent-id', 'agent_ops', '--mode', 'test']);
    expect(await opsJson(['key', 'revoke', '--key-id', String(key.key_id)])).toEqual({ key_id: key.key_id, revoked: true });
    const first = await client.query('SELECT revoked_at FROM identity.api_key WHERE key_id = $1', [key.key_id]);
    expect(first.rows[0].revoked_at).toBeInstanceOf(Date);
    expect(await opsJson(['key', 'revoke', '--key-id', String(key.key_id)])).toEqual({ key_id: key.key_id, revoked: true });
    const second = await client.query('SELECT revoked_at FROM identity.api_key WHERE key_id = $1', [key.key_id]);
    expect(second.rows[0].revoked_at).toEqual(first.rows[0].revoked_at);
    await expectFailure(['key', 'revoke', '--key-id', 'key_doesnotexist0000000'], 1, /no API key with key id/);
  });

  it('prints the audit trail of a platform\'s keys: who created and revoked which key, oldest first', async () => {
    await opsJson(['platform', 'create', '--agent-id', 'agent_audit', '--owner-uid', 'uid_audit']);
    const key = await opsJson(['key', 'create', '--agent-id', 'agent_audit', '--mode', 'live']);
    await opsJson(['key', 'revoke', '--key-id', String(key.key_id)]);
    // A second revocation changes nothing and is not recorded.
    await opsJson(['key', 'revoke', '--key-id', String(key.key_id)]);
    // A key created and revoked by the owner through the gateway's repository (the same transaction code).
    const { IdentityRepository, createIdentityDataSource } = await import('#libs/identity');
    const dataSource = createIdentityDataSource(db.url, 1, 'ops-cli-test');
    await dataSource.initialize();
    try {
      const identity = new IdentityRepository(dataSource);
      const owned = await identity.createKey('agent_audit', 'test', { name: 'Staging', actor: { kind: 'owner', sub: 'uid_audit' } });
      await identity.revokeKey(owned.key_id, { agentId: 'agent_audit', actor: { kind: 'owner', sub: 'uid_audit' } });
      const output = await opsJson(['key', 'audit', '--agent-id', 'agent_audit']);
      expect(output).toEqual({
        agent_id: 'agent_audit',
        entries: [
          { at: expect.any(String), action: 'created', key_id: key.key_id, mode: 'live', name: null, actor: 'ops', sub: null },
          { at: expect.any(String), action: 'revoked', key_id: key.key_id, mode: 'live', name: null, actor: 'ops', sub: null },
          { at: expect.any(String), action: 'created', key_id: owned.key_id, mode: 'test', name: 'Staging', actor: 'owner', sub: 'uid_audit' },
          { at: expect.any(String), action: 'revoked', key_id: owned.key_id, mode: 'test', name: 'Staging', actor: 'owner', sub: 'uid_audit' },
        ],
      });
      const times = (output.entries as { at: string }[]).map((e) => Date.parse(e.at));
      expect([...times].sort((x, y) => x - y)).toEqual(times);
      expect(JSON.stringify(output)).not.toContain(String(key.api_key));
      expect(JSON.stringify(output)).not.toContain(owned.api_key);
    } finally {
      await dataSource.destroy();
    }
    await expectFailure(['key', 'audit', '--agent-id', 'agent_missing'], 1, /no platform with agent id agent_missing/);
  });

  it.each([
    [[], /missing command/],
    [['platform', 'delete', '--agent-id', 'a'], /unknown command/],
    [['platform', 'create'], /needs --agent-id/],
    [['key', 'create', '--agent-id', 'agent_ops', '--mode', 'prod'], /--mode must be live or test/],
    [['key', 'create', '--agent-id', 'agent_ops'], /needs --mode/],
    [['key', 'revoke', '--key-id', 'k', '--bogus'], /Unknown option/],
    [['platform', 'create', '--agent-id', 'bad id with spaces'], /agent id must be/],
  ])('exits 2 on bad usage %j', async (args, message) => {
    await expectFailure(args as string[], 2, message as RegExp);
  });

  it('still succeeds, with a warning on stderr, when NATS is unreachable', async () => {
    const port = await freePort();
    const run = await ops(['platform', 'create', '--agent-id', 'agent_nonats'], { NATS_URL: `nats://127.0.0.1:${port}` });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ agent_id: 'agent_nonats', owner_uid: null, status: 'active' });
    expect(run.stderr).toMatch(/warning: .*could not be notified over NATS/);
  });

  it('fails cleanly when the database is unreachable', async () => {
    const port = await freePort();
    const run = await ops(['platform', 'create', '--agent-id', 'agent_x'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/weave` });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: /);
  });
});
