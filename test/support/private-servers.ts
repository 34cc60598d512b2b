import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './servers.js';

/**
 * Servers a fault test owns outright: its own PostgreSQL cluster and Redis, on their own ports
 * and data directories under a temp dir, so that a test can stop, kill and restart them without
 * touching the machine's shared servers (or another test's). A private nats-server is
 * `startNats()` of servers.ts (file storage, restartable on the same port and store).
 */

const run = promisify(execFile);

/** The newest PostgreSQL server binaries installed (Debian layout), or PG_BIN_DIR. */
function postgresBinDir(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries under ${root}; set PG_BIN_DIR`);
  return join(root, versions[0], 'bin');
}

async function waitUntil(probe: () => Promise<boolean>, what: string, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface PrivatePostgres {
  port: number;
  /** Data directory (owned by the postgres user). */
  dataDir: string;
  /** Server log (pg_ctl -l): errors such as "deadlock detected" land here. */
  logFile: string;
  /** URL of a database on this cluster (created on first use by the services). */
  url(database: string): string;
  /** `immediate` is a crash as far as the data is concerned: no checkpoint, recovery at start. */
  stop(options?: { mode?: 'smart' | 'fast' | 'immediate' }): Promise<void>;
  start(): Promise<void>;
  restart(options?: { mode?: 'smart' | 'fast' | 'immediate' }): Promise<void>;
  log(): Promise<string>;
  /** Stops the server (immediate) and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL cluster of its own (initdb in a temp dir, trust auth, 127.0.0.1 only, fsync on).
 * initdb refuses to run as root, so when the tests run as root the directory is given to the
 * `postgres` user and the binaries run through `runuser -u postgres --`.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const port = await freePort();
  const root = await mkdtemp(join(tmpdir(), 'weave-pg-'));
  const dataDir = join(root, 'data');
  const logFile = join(root, 'postgres.log');
  const asRoot = process.getuid?.() === 0;
  await mkdir(dataDir, { mode: 0o700 });
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    await chown(root, uid, gid);
    await chown(dataDir, uid, gid);
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);

  await pg('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  await appendFile(
    join(dataDir, 'postgresql.conf'),
    [
      '',
      '# private test cluster (test/support/private-servers.ts)',
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${root}'`,
      'fsync = on',
      'max_connections = 200',
      `log_line_prefix = '%m [%p] '`,
      '',
    ].join('\n'),
  );

  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = tcpConnect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  const start = async () => {
    await pg('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']);
    await waitUntil(answers, `private PostgreSQL on ${port}`);
  };
  const stop = async ({ mode = 'fast' }: { mode?: 'smart' | 'fast' | 'immediate' } = {}) => {
    await pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  await start();
  return {
    port,
    dataDir,
    logFile,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
    start,
    restart: async (options) => {
      await stop(options);
      await start();
    },
    log: () => readFile(logFile, 'utf8').catch(() => ''),
    destroy: async () => {
      await stop({ mode: 'immediate' }).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** Stops the server (SIGKILL by default: Redis simply disappears, as in an outage). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>;
  running(): boolean;
  destroy(): Promise<void>;
}

/**
 * A redis-server of its own: own port, no persistence, stoppable and restartable. `args` adds
 * server settings, e.g. ACL users (`--user default off --user weave on >… ~weave:* +@all`).
 */
export async function startPrivateRedis(options: { args?: string[]; probe?: { user: string; pass: string } } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'weave-redis-'));
  let child: ChildProcess | undefined;
  const pong = () =>
    new Promise<boolean>((resolve) => {
      const auth = options.probe ? `AUTH ${options.probe.user} ${options.probe.pass}\r\n` : '';
      const socket = tcpConnect({ host: '127.0.0.1', port }, () => socket.write(`${auth}PING\r\n`));
      socket.setTimeout(1000, () => {
        socket.destroy();
        resolve(false);
      });
      let received = '';
      socket.on('data', (data) => {
        received += data.toString();
        // One reply line per command sent (AUTH, then PING).
        if (received.split('\r\n').length - 1 < (options.probe ? 2 : 1)) return;
        socket.destroy();
        resolve(received.split('\r\n').includes('+PONG'));
      });
      socket.once('error', () => resolve(false));
    });
  const start = async () => {
    child = spawn(
      process.env.REDIS_SERVER_BIN ?? 'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', ...(options.args ?? [])],
      { stdio: 'ignore' },
    );
    await waitUntil(pong, `private Redis on ${port}`);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill(signal);
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    destroy: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
