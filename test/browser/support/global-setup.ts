import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { signInForTokens } from '../../support/oidc-flow.js';
import { REDIS_URL, freePort, newTestDatabase, waitFor } from '../../support/servers.js';
import { publishSystem, randomPassword, type BrowserSystem, type DemoResult } from './system.js';

const ROOT = process.cwd();
const LIB = join(ROOT, 'libs', 'weave-node');
const run = promisify(execFile);
const RANGES = ['today', '1d', '7d', '30d', '90d', 'all'] as const;
const DEFAULT_GRANULARITY: Record<(typeof RANGES)[number], string> = { today: 'hour', '1d': 'hour', '7d': 'day', '30d': 'day', '90d': 'day', all: 'day' };

/**
 * Starts the system once for the whole browser suite, the way `npm start` starts it: the
 * launcher (scripts/start-all.mjs) with the built services and no OIDC settings, so that it runs
 * the development identity provider and creates the demo platform; a private nats-server (the
 * launcher starts one: nothing answers at NATS_URL), this machine's PostgreSQL (a database of
 * its own) and Redis; free ports. Then `npm run demo` fills the demo platform, the ops CLI adds
 * a platform for an owner without a role, and every report scope the pages open first is asked
 * for once, so that it is prepared (the first request is a 202) before a page asks. Returns the
 * teardown, which stops the launcher as Ctrl-C would and drops the database.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  for (const file of ['dist/apps/gateway/src/main.js', 'dist/apps/dev-identity-provider/src/index.js', 'dist/dashboard/index.html']) {
    if (!existsSync(join(ROOT, file))) throw new Error(`${file} is missing: npm run test:browser builds it (npm run build)`);
  }
  // @vendor/weave-node as its own build script makes it (the keys test calls the gateway with it).
  await run(process.execPath, [join(LIB, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT });

  const dataDir = await mkdtemp(join(tmpdir(), 'weave-browser-'));
  await chmod(dataDir, 0o755);
  const db = newTestDatabase();
  const ports = {
    PORT: await freePort(),
    REPORTING_HTTP_PORT: await freePort(),
    PAYOUTS_HTTP_PORT: await freePort(),
    TIMEZONE_HTTP_PORT: await freePort(),
    RECOMMENDATIONS_HTTP_PORT: await freePort(),
    DEV_IDP_PORT: await freePort(),
  };
  const gateway = `http://127.0.0.1:${ports.PORT}`;
  const owner = { username: 'demo', password: randomPassword(), sub: 'demo-owner' };
  const viewer = { username: 'viewer', password: randomPassword(), sub: 'viewer-owner', agentId: 'agent_viewer' };
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OIDC_') && !name.startsWith('npm_'))),
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    NATS_URL: `nats://127.0.0.1:${await freePort()}`,
    DATABASE_URL: db.url,
    REDIS_URL,
    HOST: '127.0.0.1',
    LAUNCHER_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    DEV_IDP_PASSWORD: owner.password,
    DEV_IDP_ACCOUNTS: JSON.stringify([{ username: viewer.username, password: viewer.password, sub: viewer.sub, name: 'Viewer without a role' }]),
    // Reports follow the events within seconds; a stopped service answers 503 within a second;
    // a key's use shows in last_used_at (and fills last4) within a second.
    REPORTING_PUBLISH_INTERVAL_MS: '1500',
    REPORTING_REQUEST_TIMEOUT_MS: '1000',
    KEY_USAGE_FLUSH_INTERVAL_MS: '300',
  };

  const launcher: ChildProcess = spawn(process.execPath, [join(ROOT, 'scripts', 'start-all.mjs')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  launcher.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));

  async function teardown(): Promise<void> {
    if (launcher.exitCode === null && launcher.signalCode === null) {
      launcher.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30000))]);
      if (code === 'timeout') launcher.kill('SIGKILL');
      if (code !== 0) process.stderr.write(`the launcher stopped with ${code === 'timeout' ? 'a timeout' : `exit code ${code}`}:\n${output.slice(-3000)}\n`);
    }
    await db.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }

  try {
    await waitFor(() => /^sign in at /m.test(output) || launcher.exitCode !== null, { timeoutMs: 90000, intervalMs: 200, what: "the launcher's sign-in line" });
    if (launcher.exitCode !== null) throw new Error(`the launcher exited with ${launcher.exitCode}`);
    const started = /^started (.*)$/m.exec(output)?.[1] ?? '';
    const pids = Object.fromEntries([...started.matchAll(/([a-z-]+) \(pid (\d+)\)/g)].map(([, name, pid]) => [name!, Number(pid)]));

    // `npm run demo` (built) on the same servers, as a person runs it in a second terminal.
    const { stdout } = await run(process.execPath, [join(ROOT, 'dist', 'apps', 'demo-seed', 'src', 'main.js'), '--json'], { cwd: ROOT, env, timeout: 60000 });
    const demo = JSON.parse(stdout) as DemoResult;
    await run(process.execPath, [join(ROOT, 'dist', 'apps', 'ops', 'src', 'main.js'), 'platform', 'create', '--agent-id', viewer.agentId, '--owner-uid', viewer.sub], { cwd: ROOT, env });

    const system: BrowserSystem = {
      gateway,
      issuer: `http://127.0.0.1:${ports.DEV_IDP_PORT}`,
      clientId: 'weave-dashboard',
      owner,
      viewer,
      databaseUrl: db.url,
      launcherOutput: output,
      pids,
      demo,
    };
    await warmUp(system);
    publishSystem(system);
    return teardown;
  } catch (error) {
    await writeFile(join(ROOT, 'test-results', 'browser-launcher.log'), output).catch(() => undefined);
    await teardown();
    throw new Error(`${(error as Error).message}\n--- launcher output ---\n${output.slice(-4000)}`);
  }
}

/**
 * Asks once for every report and series scope the reporting page opens first (both traffics),
 * until each answers 200.
 */
async function warmUp(system: BrowserSystem): Promise<void> {
  const { id_token: token } = await signInForTokens({
    issuer: system.issuer,
    clientId: system.clientId,
    redirectUri: `${system.gateway}/dashboard/`,
    username: system.owner.username,
    password: system.owner.password,
  });
  const paths: string[] = [];
  for (const traffic of ['live', 'test']) {
    for (const range of RANGES) {
      paths.push(`/agent/dashboard/reporting?time_range=${range}&traffic=${traffic}`);
      paths.push(`/agent/dashboard/reporting/series?time_range=${range}&granularity=${DEFAULT_GRANULARITY[range]}&traffic=${traffic}`);
    }
  }
  await Promise.all(
    paths.map((path) =>
      waitFor(
        async () => {
          const response = await fetch(`${system.gateway}${path}`, { headers: { authorization: `Bearer ${token}` } });
          await response.arrayBuffer();
          return response.status === 200;
        },
        { timeoutMs: 30000, intervalMs: 300, what: `200 from ${path}` },
      ),
    ),
  );
}
