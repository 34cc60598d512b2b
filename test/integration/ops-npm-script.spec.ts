import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { newTestDatabase, startNats, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * `npm run ops` as a new user calls it (DESIGN §3): it runs the build in dist/ and never
 * rebuilds it, so calls at once do not break each other (each used to rewrite dist/ while
 * another imported it); a missing or stale build is refused with one line on stderr.
 */
interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// A user's shell, not npm's: no npm_* variables inherited from the `npm test` around Jest.
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key) && key !== 'INIT_CWD') env[key] = value;
  return { ...env, ...extra };
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { env, timeout: 60000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run ops', () => {
  let nats: TestNats;
  let db: TestDatabase;
  const ops = (args: string[]) => run('npm', ['run', '--silent', 'ops', '--', ...args], userEnv({ DATABASE_URL: db.url, NATS_URL: nats.url }));

  /** Exit 0 and exactly one JSON object (one line) on stdout. */
  function json(result: Run): Record<string, unknown> {
    if (result.code !== 0) throw new Error(`ops failed (${result.code}): ${result.stderr}`);
    expect(result.stdout.endsWith('\n')).toBe(true);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  }

  beforeAll(async () => {
    nats = await startNats();
    db = newTestDatabase();
  });

  afterAll(async () => {
    await nats?.stop();
    await db?.drop();
  });

  it('runs eight commands at once on a fresh database, each printing one JSON object, without rebuilding dist/', async () => {
    const entry = resolve('dist/apps/ops/src/main.js');
    const builtAt = statSync(entry).mtimeMs;
    const agents = Array.from({ length: 8 }, (_, i) => `agent_at_once_${i}`);

    const platforms = await Promise.all(agents.map((agent) => ops(['platform', 'create', '--agent-id', agent])));
    expect(platforms.map(json)).toEqual(agents.map((agent_id) => ({ agent_id, owner_uid: null, status: 'active' })));

    const keys = (await Promise.all(agents.map((agent) => ops(['key', 'create', '--agent-id', agent, '--mode', 'live'])))).map(json);
    for (const key of keys) expect(key).toEqual({ key_id: expect.stringMatching(/^key_/), api_key: expect.stringMatching(/^sk_live_/), mode: 'live' });
    expect(new Set(keys.map((k) => k.key_id)).size).toBe(8);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>('SELECT count(DISTINCT agent_id)::int AS n FROM identity.api_key');
      expect(rows[0].n).toBe(8);
    } finally {
      await client.end();
    }
    expect(statSync(entry).mtimeMs).toBe(builtAt);
  });
});

describe('scripts/ops.mjs on a copy of the tree', () => {
  // The real script, run in a small tree of its own: sources, and a "build" whose entry point
  // prints its arguments, so that the freshness check is tested without touching this repo.
  let root: string;
  const T0 = new Date('2026-01-01T00:00:00Z');
  const T1 = new Date('2026-01-01T00:01:00Z');

  function put(path: string, content: string, at: Date): void {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
    utimesSync(join(root, path), at, at);
  }
  const script = (args: string[]) => run(process.execPath, [join(root, 'scripts/ops.mjs'), ...args], userEnv({}));

  /** Refused: exit 1, nothing on stdout, one line on stderr that says why and what to run. */
  async function expectRefused(why: RegExp): Promise<void> {
    const result = await script(['key', 'create']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.endsWith('\n')).toBe(true);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(why);
    expect(result.stderr).toMatch(/run `npm run build` first/);
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ops-script-'));
    mkdirSync(join(root, 'scripts'));
    copyFileSync(resolve('scripts/ops.mjs'), join(root, 'scripts/ops.mjs'));
    put('apps/ops/src/main.ts', 'source', T0);
    put('apps/ops/src/commands/run.ts', 'source', T0);
    put('libs/config/src/index.ts', 'source', T0);
    put('libs/weave-node/src/index.ts', 'built apart, not in dist/', T1);
    put('apps/gateway/src/main.ts', 'not part of the CLI', T1);
    put('dist/apps/ops/src/main.js', 'process.stdout.write(JSON.stringify({ args: process.argv.slice(2) }) + "\\n");', T1);
    put('dist/apps/ops/src/commands/run.js', '', T1);
    put('dist/libs/config/src/index.js', '', T1);
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('runs the built CLI with the arguments when the build is up to date', async () => {
    const result = await script(['key', 'create', '--agent-id', 'a b']);
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify({ args: ['key', 'create', '--agent-id', 'a b'] })}\n`, stderr: '' });
  });

  it('refuses when a source of the CLI or of a library is newer than its build', async () => {
    put('libs/config/src/index.ts', 'edited', new Date(T1.getTime() + 1000));
    await expectRefused(/dist\/ is older than libs\/config\/src\/index\.ts/);
    put('libs/config/src/index.ts', 'edited', T0);
    put('apps/ops/src/commands/run.ts', 'edited', new Date(T1.getTime() + 1000));
    await expectRefused(/older than apps\/ops\/src\/commands\/run\.ts/);
  });

  it('refuses when a compiled file or the whole build is missing', async () => {
    put('libs/config/src/added.ts', 'new file', T0);
    await expectRefused(/has no dist\/libs\/config\/src\/added\.js/);
    rmSync(join(root, 'dist'), { recursive: true });
    await expectRefused(/has no dist\/apps\/ops\/src\/main\.js/);
  });
});
