import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { BroadcastSubjects } from '#libs/contracts';
import { IDENTITY_CHANGED_SUBJECT } from '#libs/identity';
import { newTestDatabase, startNats, waitFor, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * `ops batch`: JSON lines of commands from stdin or a file, one JSON result line each, in one
 * process (the built dist/, against this file's private database and nats-server).
 */
const CLI = resolve('dist/apps/ops/src/main.js');

let nats: TestNats;
let db: TestDatabase;
let bus: NatsConnection;
const broadcasts: { agent_id?: string; key_id?: string }[] = [];
let dir: string;

function batch(args: string[], input: string): Promise<{ code: number | null; lines: Record<string, unknown>[]; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'batch', ...args], { env: { ...process.env, DATABASE_URL: db.url, NATS_URL: nats.url }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  return new Promise((done) =>
    child.once('exit', (code) => done({ code, stderr, lines: stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) })),
  );
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  nats = await startNats();
  db = newTestDatabase();
  bus = await connect({ servers: nats.url });
  bus.subscribe(BroadcastSubjects.identityChanged, {
    callback: (_error, msg) => {
      broadcasts.push(msg.json());
    },
  });
  await bus.flush();
  dir = await mkdtemp(join(tmpdir(), 'ops-batch-'));
});

afterAll(async () => {
  await bus?.close();
  await nats?.stop();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('ops batch', () => {
  it('announces on the subject the gateways listen to', () => {
    expect(IDENTITY_CHANGED_SUBJECT).toBe(BroadcastSubjects.identityChanged);
  });

  it('runs each line in order, prints one result per line, and goes on after a failure', async () => {
    const keys = 25;
    const input = [
      JSON.stringify(['platform', 'create', '--agent-id', 'agent_batch']),
      JSON.stringify({ command: 'platform create', agent_id: 'agent_batch_owned', 'owner-uid': 'uid_batch' }),
      ...Array.from({ length: keys }, (_, i) => JSON.stringify({ command: 'key create', agent_id: 'agent_batch', mode: i % 2 ? 'live' : 'test' })),
      '',
      JSON.stringify({ command: 'key create', agent_id: 'agent_missing', mode: 'test' }),
      JSON.stringify({ command: 'key create', agent_id: 'agent_batch', mode: 'prod' }),
      'not json',
      JSON.stringify(['batch']),
      JSON.stringify({ command: 'platform suspend', agent_id: 'agent_batch' }),
    ].join('\n');
    const { code, lines, stderr } = await batch([], input);
    expect(stderr).toBe('');
    expect(code).toBe(1);
    expect(lines.map((line) => line.line)).toEqual([1, 2, ...Array.from({ length: keys }, (_, i) => 3 + i), 29, 30, 31, 32, 33]);
    expect(lines[0]).toEqual({ line: 1, ok: true, result: { agent_id: 'agent_batch', owner_uid: null, status: 'active' } });
    expect(lines[1]).toEqual({ line: 2, ok: true, result: { agent_id: 'agent_batch_owned', owner_uid: 'uid_batch', status: 'active' } });
    const created = lines.slice(2, 2 + keys).map((line) => (line as { result: { key_id: string; api_key: string; mode: string } }).result);
    expect(lines.slice(2, 2 + keys).every((line) => line.ok === true)).toBe(true);
    expect(new Set(created.map((key) => key.key_id)).size).toBe(keys);
    created.forEach((key, i) => expect(key.api_key).toMatch(i % 2 ? /^sk_live_/ : /^sk_test_/));
    expect(lines.slice(2 + keys)).toEqual([
      { line: 29, ok: false, exit_code: 1, error: 'no platform with agent id agent_missing' },
      { line: 30, ok: false, exit_code: 2, error: '--mode must be live or test' },
      { line: 31, ok: false, exit_code: 2, error: expect.stringMatching(/^not a JSON line/) },
      { line: 32, ok: false, exit_code: 2, error: '"batch" cannot run inside a batch' },
      { line: 33, ok: true, result: { agent_id: 'agent_batch', status: 'suspended' } },
    ]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM identity.api_key WHERE agent_id = 'agent_batch'");
      expect(rows[0].n).toBe(keys);
    } finally {
      await client.end();
    }
    // Every change reached the gateways' subject, each key with its id.
    await waitFor(() => created.every((key) => broadcasts.some((b) => b.key_id === key.key_id)), { timeoutMs: 5000, what: 'key broadcasts' });
  });

  it('reads a file, and exits 0 when every line succeeded', async () => {
    const file = join(dir, 'commands.jsonl');
    await writeFile(file, `${JSON.stringify({ command: 'platform activate', agent_id: 'agent_batch' })}\n${JSON.stringify(['key', 'audit', '--agent-id', 'agent_batch_owned'])}\n`);
    const { code, lines } = await batch(['--file', file], '');
    expect(code).toBe(0);
    expect(lines).toEqual([
      { line: 1, ok: true, result: { agent_id: 'agent_batch', status: 'active' } },
      { line: 2, ok: true, result: { agent_id: 'agent_batch_owned', entries: [] } },
    ]);
    const missing = await batch(['--file', join(dir, 'missing.jsonl')], '');
    expect(missing.code).toBe(1);
    expect(missing.lines).toEqual([]);
    expect(missing.stderr).toMatch(/^error: ENOENT/);
  });
});
