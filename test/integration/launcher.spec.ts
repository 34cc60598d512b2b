import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REDIS_URL, freePort, newTestDatabase, startNats, waitFor, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * `npm start` (DESIGN §2): scripts/start-all.mjs runs every built service as its own process
 * and stops them together. Runs against dist/, which `npm test` builds first.
 */
const ROOT = process.cwd();
const LAUNCHER = join(ROOT, 'scripts', 'start-all.mjs');

const SERVICES = [
  { name: 'gateway', portVariable: 'PORT' },
  { name: 'reporting-projection', portVariable: 'REPORTING_HTTP_PORT' },
  { name: 'payouts-read', portVariable: 'PAYOUTS_HTTP_PORT' },
  { name: 'timezone-settings', portVariable: 'TIMEZONE_HTTP_PORT' },
  { name: 'recommendations', portVariable: 'RECOMMENDATIONS_HTTP_PORT' },
] as const;

interface Launched {
  process: ChildProcess;
  output: () => string;
  /** pid of each child, from the launcher's own "started" lines. */
  pids: Map<string, number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const launched: Launched[] = [];

function launch(env: Record<string, string>, args: string[] = []): Launched {
  const child = spawn(process.execPath, [LAUNCHER, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const pids = new Map<string, number>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const line of chunk.toString().split('\n')) {
      if (!line.includes('"service":"launcher"')) continue;
      try {
        const entry = JSON.parse(line) as { child?: string; pid?: number; msg?: string };
        if (entry.child && entry.pid && entry.msg?.startsWith('started')) pids.set(entry.child, entry.pid);
      } catch {
        // a partial line; the "started" lines are written long before any chunk boundary matters
      }
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const result = { process: child, output: () => output, pids, exited };
  launched.push(result);
  return result;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function readyStatus(port: number): Promise<number | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(3000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return undefined;
  }
}

describe('scripts/start-all.mjs', () => {
  let nats: TestNats;
  let db: TestDatabase;

  beforeAll(async () => {
    nats = await startNats();
    db = newTestDatabase();
  });

  afterEach(async () => {
    // Whatever a failed test left behind: the launcher, then its (detached) children.
    for (const run of launched.splice(0)) {
      if (run.process.exitCode === null && run.process.signalCode === null) {
        run.process.kill('SIGTERM');
        await within(run.exited, 15000, 'launcher exit').catch(() => run.process.kill('SIGKILL'));
      }
      for (const pid of run.pids.values()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  afterAll(async () => {
    await db?.drop();
    await nats?.stop();
  });

  async function environment(): Promise<{ env: Record<string, string>; ports: Record<string, number> }> {
    const ports: Record<string, number> = {};
    const env: Record<string, string> = {
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      REDIS_URL,
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    };
    for (const { name, portVariable } of SERVICES) {
      ports[name] = await freePort();
      env[portVariable] = String(ports[name]);
    }
    return { env, ports };
  }

  it('starts every service, each ready, and exits 0 on SIGTERM after they all stopped', async () => {
    for (const { name } of SERVICES) {
      const main = join(ROOT, 'dist', 'apps', name, 'src', 'main.js');
      if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first (npm test does)`);
    }
    const { env, ports } = await environment();
    const run = launch(env);

    for (const { name } of SERVICES) {
      await waitFor(async () => (await readyStatus(ports[name])) === 200, {
        timeoutMs: 60000,
        intervalMs: 250,
        what: `${name} /health/ready 200`,
      }).catch((error: Error) => {
        throw new Error(`${error.message}\n--- launcher output ---\n${run.output().slice(-4000)}`);
      });
    }
    expect([...run.pids.keys()].sort()).toEqual(SERVICES.map((s) => s.name).sort());

    run.process.kill('SIGTERM');
    const { code, signal } = await within(run.exited, 15000, 'launcher exit after SIGTERM');
    expect({ code, signal, output: code === 0 ? '' : run.output().slice(-4000) }).toEqual({ code: 0, signal: null, output: '' });
    for (const [name, pid] of run.pids) expect({ name, alive: isAlive(pid) }).toEqual({ name, alive: false });
    for (const { name } of SERVICES) expect(await readyStatus(ports[name])).toBeUndefined();
  });

  it('stops the other services and exits non-zero when one dies unexpectedly', async () => {
    const { env, ports } = await environment();
    const run = launch(env, ['payouts-read', 'timezone-settings']);
    for (const name of ['payouts-read', 'timezone-settings']) {
      await waitFor(async () => (await readyStatus(ports[name])) === 200, {
        timeoutMs: 60000,
        intervalMs: 250,
        what: `${name} /health/ready 200`,
      });
    }
    const victim = run.pids.get('payouts-read')!;
    const survivor = run.pids.get('timezone-settings')!;
    process.kill(victim, 'SIGKILL');

    const { code } = await within(run.exited, 15000, 'launcher exit after a child died');
    expect(code).toBe(1);
    expect(isAlive(survivor)).toBe(false);
    expect(run.output()).toMatch(/payouts-read exited unexpectedly/);
  });
});
