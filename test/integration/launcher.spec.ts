import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, symlink, unlink } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { REPORT_COUNTERS } from '#libs/contracts';
import { probeNats, probePostgres, probeRedis } from '#libs/servers';
import { REDIS_URL, freePort, useTestStack, waitFor } from '../support/index.js';
import { REPORTING_PROJECTION_NODE_FLAGS, REPORTING_PROJECTION_PROCESS_ENV } from '../../apps/reporting-projection/src/config/node-flags.js';

/**
 * `npm start` (DESIGN §2): scripts/start-all.mjs runs every built service as its own process
 * and stops them together; it starts private NATS, PostgreSQL and Redis where none answers,
 * and fails with one line per server it can neither reach nor start. `npm run demo` fills the
 * demo platform. Runs against dist/, which `npm test` builds first.
 */
const ROOT = process.cwd();
const LAUNCHER = join(ROOT, 'scripts', 'start-all.mjs');
const DEMO = join(ROOT, 'dist', 'apps', 'demo-seed', 'src', 'main.js');
const run = promisify(execFile);

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
  /** pid of each child, from the launcher's "started" line. */
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
    const started = /^started (.*)$/m.exec(output)?.[1] ?? '';
    for (const [, name, pid] of started.matchAll(/([a-z-]+) \(pid (\d+)\)/g)) pids.set(name, Number(pid));
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

async function servicePorts(env: Record<string, string>): Promise<Record<string, number>> {
  const ports: Record<string, number> = {};
  for (const { name, portVariable } of SERVICES) {
    ports[name] = await freePort();
    env[portVariable] = String(ports[name]);
  }
  // The development identity provider's, when the launcher runs it (no OIDC settings).
  ports.idp = await freePort();
  env.DEV_IDP_PORT = String(ports.idp);
  return ports;
}

afterEach(async () => {
  // Whatever a failed test left behind: the launcher, then its (detached) children.
  for (const run of launched.splice(0)) {
    if (run.process.exitCode === null && run.process.signalCode === null) {
      run.process.kill('SIGTERM');
      await within(run.exited, 20000, 'launcher exit').catch(() => run.process.kill('SIGKILL'));
    }
    for (const pid of run.pids.values()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
});

describe('scripts/start-all.mjs with the servers running', () => {
  const stack = useTestStack();

  async function environment(): Promise<{ env: Record<string, string>; ports: Record<string, number> }> {
    const env: Record<string, string> = {
      NATS_URL: stack.nats.url,
      DATABASE_URL: stack.db.url,
      REDIS_URL,
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    };
    return { env, ports: await servicePorts(env) };
  }

  it('uses them, starts every service, prints one ready line, and exits 0 on SIGTERM after they all stopped', async () => {
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
    // reporting-projection runs with its V8 flags (REPORTING_PROJECTION_NODE_FLAGS), the others with none.
    const argv = (name: string) => readFileSync(`/proc/${run.pids.get(name)}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1);
    expect(argv('reporting-projection')).toEqual([...REPORTING_PROJECTION_NODE_FLAGS, expect.stringMatching(/reporting-projection\/src\/main\.js$/)]);
    expect(argv('gateway')).toEqual([expect.stringMatching(/gateway\/src\/main\.js$/)]);
    // ... and with its process environment (REPORTING_PROJECTION_PROCESS_ENV: glibc's malloc tunables), the others without.
    const environ = (name: string) => new Map(readFileSync(`/proc/${run.pids.get(name)}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    for (const [name, value] of Object.entries(REPORTING_PROJECTION_PROCESS_ENV)) {
      // /proc shows the environment's memory, which glibc (before 2.39) cuts after the first tunable it parses: a prefix of the value.
      const seen = environ('reporting-projection').get(name) ?? '';
      expect({ name, seen, given: seen.length > 0 && value.startsWith(seen) }).toEqual({ name, seen, given: true });
      expect({ name, value: environ('gateway').get(name) }).toEqual({ name, value: process.env[name] });
    }
    const api = `http://127.0.0.1:${ports.gateway}`;
    await waitFor(() => run.output().includes('ready: '), { timeoutMs: 10000, what: 'the ready line' });
    const readyLines = run.output().split('\n').filter((line) => line.startsWith('ready: '));
    // The dashboard's URL only once it is built (npm run build:dashboard).
    const dashboard = existsSync(join(ROOT, 'dist', 'dashboard')) ? `  dashboard ${api}/dashboard/` : '';
    expect(readyLines).toEqual([`ready: API ${api}  docs ${api}/docs  metrics ${api}/metrics${dashboard}`]);
    expect(run.output()).toContain(`NATS: using the server at ${stack.nats.url}`);
    // No OIDC settings: the development identity provider runs, the demo platform exists, the
    // gateway trusts the provider and tells the dashboard about it; the sign-in line follows the ready line.
    const issuer = `http://127.0.0.1:${ports.idp}`;
    expect(run.output()).toContain(`development identity provider at ${issuer} (no OIDC settings given); demo platform agent_demo of owner demo-owner: created`);
    await waitFor(() => /^sign in at /m.test(run.output()), { timeoutMs: 5000, what: 'the sign-in line' });
    expect(run.output()).toMatch(new RegExp(`^sign in at ${api}/dashboard/ as demo / [A-Za-z0-9_-]{24} \\(development identity provider; `, 'm'));
    expect(await (await fetch(`${api}/dashboard/config.json`)).json()).toEqual({ issuer, client_id: 'weave-dashboard', role_claim: 'role', api_base_url: '' });
    expect(((await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer).toBe(issuer);
    // No deprecation (or any other) warning of Node or Fastify at start.
    expect(run.output()).not.toMatch(/DeprecationWarning|FSTDEP|\(node:\d+\) /);

    run.process.kill('SIGTERM');
    const { code, signal } = await within(run.exited, 15000, 'launcher exit after SIGTERM');
    expect({ code, signal, output: code === 0 ? '' : run.output().slice(-4000) }).toEqual({ code: 0, signal: null, output: '' });
    for (const [name, pid] of run.pids) expect({ name, alive: isAlive(pid) }).toEqual({ name, alive: false });
    for (const { name } of SERVICES) expect(await readyStatus(ports[name])).toBeUndefined();
    await expect(fetch(`${issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });

  it('never starts the development identity provider when OIDC settings are given', async () => {
    const oidc = { OIDC_ISSUER: 'https://login.example.test', OIDC_AUDIENCE: 'weave', OIDC_JWKS_URL: 'https://login.example.test/jwks', OIDC_CLIENT_ID: 'weave-dashboard-prod' };
    // Any one of them is enough: one launcher (the gateway alone) per setting, side by side on
    // ports of their own, as replicas would start.
    const variants = [];
    for (const [name, value] of Object.entries(oidc)) variants.push({ name, value, ...(await environment()) });
    await Promise.all(variants.map(async ({ name, value, env, ports }) => {
      const run = launch({ ...env, [name]: value }, ['gateway']);
      await waitFor(() => run.output().includes('\nready: '), { timeoutMs: 60000, what: 'the ready line' }).catch((error: Error) => {
        throw new Error(`${error.message}\n--- launcher output ---\n${run.output().slice(-4000)}`);
      });
      expect({ name, output: run.output() }).toEqual({ name, output: expect.not.stringMatching(/development identity provider|^sign in at /m) });
      // Not pointed at a development provider (which would set issuer and client id together).
      const config = (await (await fetch(`http://127.0.0.1:${ports.gateway}/dashboard/config.json`)).json()) as { issuer: string | null; client_id: string | null };
      expect(config).toMatchObject({ issuer: null, client_id: null });
      await expect(fetch(`http://127.0.0.1:${ports.idp}/.well-known/openid-configuration`)).rejects.toThrow();
      run.process.kill('SIGTERM');
      expect({ name, code: (await within(run.exited, 15000, 'launcher exit')).code }).toEqual({ name, code: 0 });
    }));
  });

  it('on a terminal: readable lines, at most 15 up to the sign-in line, Nest\'s start-up chatter at debug', async () => {
    const { env, ports } = await environment();
    // LOG_LEVEL as a newcomer has it (info); LOG_FORMAT unset (auto): the terminal decides.
    const terminalEnv = { ...process.env, ...env, LOG_LEVEL: 'info' } as Record<string, string>;
    delete terminalEnv.LOG_FORMAT;
    // util-linux `script` runs the launcher on a pseudo-terminal, as `npm start` in a shell would.
    const child = spawn('script', ['-qfec', `exec ${process.execPath} ${LAUNCHER}`, '/dev/null'], { cwd: ROOT, env: terminalEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = () => output.replace(/\x1b\[[0-9;]*m/g, '').split(/\r?\n/).filter((line) => line.trim() !== '');
    const pids = () => [...(/^started (.*)$/m.exec(lines().join('\n'))?.[1] ?? '').matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
    try {
      await waitFor(() => lines().some((line) => line.startsWith('sign in at ')), { timeoutMs: 90000, intervalMs: 250, what: 'the sign-in line' }).catch((error: Error) => {
        throw new Error(`${error.message}\n--- launcher output ---\n${output.slice(-4000)}`);
      });
      const upToSignIn = lines().slice(0, lines().findIndex((line) => line.startsWith('sign in at ')) + 1);
      expect(upToSignIn.length).toBeLessThanOrEqual(15);
      // Every line is for a person: none is a JSON object, and each service said where it listens.
      expect(upToSignIn.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
      for (const { name } of SERVICES) expect(upToSignIn).toContainEqual(expect.stringMatching(new RegExp(`INFO: ${name}: ${name} started \\{"port":${ports[name]}\\}$`)));
      expect(upToSignIn.join('\n')).not.toMatch(/Mapped \{|RoutesResolver|InstanceLoader|dependencies initialized/);
      expect(upToSignIn).toContainEqual(expect.stringMatching(/^ready: API /));
      // Ctrl-C on the terminal.
      child.stdin.write('\x03');
      expect(await within(exited, 20000, 'launcher exit after Ctrl-C')).toBe(0);
      expect(lines().at(-1)).toBe('all stopped');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of pids()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
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

describe('scripts/start-all.mjs where no server runs', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weave-launcher-'));
    // PostgreSQL runs as the postgres user when the tests run as root: it must reach its directory.
    await chmod(dir, 0o755);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function closedUrls(): Promise<Record<string, string>> {
    return {
      NATS_URL: `nats://127.0.0.1:${await freePort()}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/weave`,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    };
  }

  it('without the server programs: one line per server (URL, why, how to get it), exit 1, no stack trace, nothing started', async () => {
    // A PATH with node alone, and no PostgreSQL under PG_BIN_DIR (it stands for the Debian
    // directory /usr/lib/postgresql/<v>/bin, which the launcher also searches).
    const bin = join(dir, 'bin-node-only');
    await run('mkdir', ['-p', bin, join(dir, 'no-postgres')]);
    await symlink(process.execPath, join(bin, 'node')).catch(() => undefined);
    const urls = await closedUrls();
    const env = { ...urls, PATH: bin, PG_BIN_DIR: join(dir, 'no-postgres'), LAUNCHER_DATA_DIR: join(dir, 'data-none'), NATS_SERVER_BIN: '', REDIS_SERVER_BIN: '' };
    await servicePorts(env);
    const launcher = launch(env);
    const { code } = await within(launcher.exited, 15000, 'launcher exit');
    const output = launcher.output();
    expect(code).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(3);
    const [natsLine, postgresLine, redisLine] = lines;
    expect(natsLine).toBe(
      `NATS: no server answers at ${urls.NATS_URL} (connection refused: nothing listens there); nats-server is not installed, so none could be started here. ` +
        'Get it: apt install nats-server (Debian/Ubuntu), brew install nats-server (macOS), or run the whole system with docker compose up',
    );
    expect(postgresLine).toMatch(new RegExp(`^PostgreSQL: no server answers at ${urls.DATABASE_URL.replace(/[/.]/g, '\\$&')} \\(connection refused: nothing listens there\\); PostgreSQL's server programs \\(initdb, pg_ctl\\) are not installed .*Get it: apt install postgresql \\(Debian/Ubuntu\\), brew install postgresql@16 \\(macOS\\), or run the whole system with docker compose up$`));
    expect(redisLine).toBe(
      `Redis: no server answers at ${urls.REDIS_URL} (connection refused: nothing listens there); redis-server is not installed, so none could be started here. ` +
        'Get it: apt install redis-server (Debian/Ubuntu), brew install redis (macOS), or run the whole system with docker compose up',
    );
    expect(output).not.toMatch(/^\s+at |Error:|ECONNREFUSED/m);
    expect(launcher.pids.size).toBe(0);
  });

  it('with NATS and PostgreSQL failing and Redis answering: still one line for each of the three', async () => {
    const bin = join(dir, 'bin-node-only');
    await run('mkdir', ['-p', bin, join(dir, 'no-postgres')]);
    await symlink(process.execPath, join(bin, 'node')).catch(() => undefined);
    const urls = { ...(await closedUrls()), REDIS_URL };
    const env = { ...urls, PATH: bin, PG_BIN_DIR: join(dir, 'no-postgres'), LAUNCHER_DATA_DIR: join(dir, 'data-redis-only'), NATS_SERVER_BIN: '', REDIS_SERVER_BIN: '' };
    await servicePorts(env);
    const launcher = launch(env);
    const { code } = await within(launcher.exited, 15000, 'launcher exit');
    expect(code).toBe(1);
    const lines = launcher.output().trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^NATS: no server answers at .*nats-server is not installed/);
    expect(lines[1]).toMatch(/^PostgreSQL: no server answers at .*are not installed/);
    expect(lines[2]).toBe(`Redis: using the server at ${REDIS_URL}`);
    expect(launcher.pids.size).toBe(0);
  });

  it('with the programs: private servers under LAUNCHER_DATA_DIR, ready within 30 s, the demo twice adds nothing twice, the report survives a restart', async () => {
    const dataDir = join(dir, 'data');
    const urls = await closedUrls();
    const env: Record<string, string> = {
      ...urls,
      LAUNCHER_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      REPORTING_PUBLISH_INTERVAL_MS: '1000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    };
    const ports = await servicePorts(env);
    const api = `http://127.0.0.1:${ports.gateway}`;

    async function startAndWaitReady(): Promise<Launched> {
      const launcher = launch(env);
      await waitFor(async () => (await readyStatus(ports.gateway)) === 200, { timeoutMs: 30000, intervalMs: 200, what: 'gateway /health/ready 200' }).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n--- launcher output ---\n${launcher.output().slice(-4000)}`);
        },
      );
      await waitFor(() => launcher.output().includes('\nready: '), { timeoutMs: 30000, what: 'the ready line' });
      return launcher;
    }
    async function stop(launcher: Launched): Promise<void> {
      launcher.process.kill('SIGINT');
      const { code } = await within(launcher.exited, 30000, 'launcher exit after SIGINT');
      expect({ code, output: code === 0 ? '' : launcher.output().slice(-4000) }).toEqual({ code: 0, output: '' });
      expect(launcher.output()).toContain('stopped the private servers');
      // Stopped with the services: nothing answers any more.
      expect((await probeNats(urls.NATS_URL, 500)).ok).toBe(false);
      expect((await probePostgres(urls.DATABASE_URL, 500)).ok).toBe(false);
      expect((await probeRedis(urls.REDIS_URL, 500)).ok).toBe(false);
    }
    async function demo(): Promise<DemoJson> {
      const { stdout } = await run(process.execPath, [DEMO, '--json'], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60000 });
      return JSON.parse(stdout) as DemoJson;
    }
    async function streamMessages(): Promise<number> {
      const nc = await connect({ servers: urls.NATS_URL });
      try {
        return (await (await jetstreamManager(nc)).streams.info('EVENTS')).state.messages;
      } finally {
        await nc.close();
      }
    }
    async function report(key: string): Promise<Record<string, unknown> | undefined> {
      const response = await fetch(`${api}/agent/reporting?time_range=all`, { headers: { authorization: `Bearer ${key}` } });
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    }
    const figures = (r: Record<string, unknown> | undefined) => r && Object.fromEntries(FIGURES.map((f) => [f, r[f]]));
    async function reportEquals(key: string, expected: Record<string, unknown>): Promise<void> {
      const want = figures(expected);
      let last: unknown;
      await waitFor(
        async () => {
          last = figures(await report(key));
          return JSON.stringify(last) === JSON.stringify(want);
        },
        { timeoutMs: 30000, intervalMs: 500, what: 'the report the demo announced' },
      ).catch(() => expect(last).toEqual(want));
    }

    const first = await startAndWaitReady();
    for (const [label, url] of [['NATS', urls.NATS_URL], ['PostgreSQL', urls.DATABASE_URL], ['Redis', urls.REDIS_URL]]) {
      expect(first.output()).toContain(`${label}: started a private server at ${url} (data in ${join(dataDir, label === 'NATS' ? 'nats' : label === 'PostgreSQL' ? 'postgres' : 'redis')}`);
    }
    expect(existsSync(join(dataDir, 'postgres', 'data', 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(dataDir, 'nats', 'jetstream'))).toBe(true);

    // The launcher created the demo platform for its development identity provider; the demo fills it.
    expect(first.output()).toContain('demo platform agent_demo of owner demo-owner: created');
    const created = await demo();
    expect(created).toMatchObject({ agent_id: 'agent_demo', owner_uid: 'demo-owner', platform_created: false, published: { already_in_stream: false, duplicates: 0 } });
    expect(created.published.stored).toBe(created.published.published);
    expect(created.keys.live).toMatchObject({ mode: 'live', created: true });
    // The sample catalog, as `ops ads import` imports it: recommendations find products right away.
    const ads = (JSON.parse(readFileSync(join(ROOT, 'catalog', 'sample-catalog.json'), 'utf8')) as { ads: unknown[] }).ads.length;
    expect(created.catalog).toEqual({ file: join(ROOT, 'catalog', 'sample-catalog.json'), imported: ads, created: ads, updated: 0, unchanged: 0 });
    await reportEquals(created.keys.live.api_key, { ...created.expected_reports.live, earnings_coverage: 'partial', is_test: false });
    await reportEquals(created.keys.test.api_key, { ...created.expected_reports.test, earnings_coverage: 'unavailable', is_test: true });
    const stored = await streamMessages();
    expect(stored).toBe(created.published.stored);

    // Again: the same platform, the same keys, nothing published; and with the marker gone,
    // the same ids again, all recognized as duplicates by the stream.
    const second = await demo();
    expect(second).toMatchObject({ platform_created: false, published: { already_in_stream: true, published: 0 } });
    expect(second.keys.live).toEqual({ ...created.keys.live, created: false });
    expect(second.catalog).toMatchObject({ imported: ads, created: 0, updated: 0, unchanged: ads });
    expect(second.expected_reports).toEqual(created.expected_reports);
    await unlink(join(dataDir, 'demo', 'published.json'));
    const third = await demo();
    expect(third.published).toMatchObject({ already_in_stream: false, stored: 0, duplicates: created.published.published });
    expect(await streamMessages()).toBe(stored);

    // The payouts the demo announced are in the payout read model.
    const nc = await connect({ servers: urls.NATS_URL });
    const overview = (await nc.request('payouts.v1.overview.get', JSON.stringify({ agent_id: 'agent_demo' }), { timeout: 5000 })).json<{
      ok: boolean;
      result: { balances: Record<string, unknown>[]; readiness: { setup_status: string } };
    }>();
    await nc.close();
    expect(overview.ok).toBe(true);
    expect(overview.result.balances).toEqual([expect.objectContaining(created.payouts.balance)]);
    expect(overview.result.readiness.setup_status).toBe('complete');

    const before = await report(created.keys.live.api_key);
    await stop(first);

    // Restarted on the same data: the platform, its key, the stream and the report are all there.
    const restarted = await startAndWaitReady();
    expect(restarted.output()).toContain(`PostgreSQL: started a private server at ${urls.DATABASE_URL}`);
    expect(restarted.output()).toContain('demo platform agent_demo of owner demo-owner: exists');
    await reportEquals(created.keys.live.api_key, before!);
    expect(await streamMessages()).toBe(stored);
    await stop(restarted);
  });
});

const FIGURES = [...REPORT_COUNTERS, 'accounting_reconciled_through', 'earnings_coverage', 'is_test'] as const;

interface DemoJson {
  catalog: { file: string; imported: number; created: number; updated: number; unchanged: number };
  agent_id: string;
  owner_uid: string;
  platform_created: boolean;
  keys: Record<'live' | 'test', { key_id: string; api_key: string; mode: string; created: boolean }>;
  published: { published: number; stored: number; duplicates: number; already_in_stream: boolean };
  expected_reports: Record<'live' | 'test', Record<string, unknown>>;
  payouts: { balance: Record<string, unknown> };
}
