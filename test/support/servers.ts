import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { NatsServer } from '#libs/servers';

/**
 * Test servers. Every test file gets its own nats-server (JetStream on, own port and store
 * directory) and its own PostgreSQL database, so files run in parallel without seeing each
 * other's streams or rows. Both are the real servers of this machine, not doubles. The server
 * processes are those of #libs/servers, which the launcher of `npm start` uses too.
 */
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Ports this process has handed out: the kernel may offer a closed port again at once. */
const handedOut = new Set<number>();

/**
 * A port free now and never handed out before in this process, so the ports a test picks for
 * several servers of one run (services, private NATS, PostgreSQL, Redis) are distinct.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

/**
 * Starts a server on a free port. A port is free when chosen and bound by the server a moment
 * later; another test worker may take it between the two, and the server then exits at start
 * ("address already in use": the readiness probes tell our server from the one that took the
 * port). Then it starts on another port.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= tries || !/address already in use/i.test((error as Error).message)) throw error;
    }
  }
}

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resolves once every thread of process `pid` is stopped (state T in /proc). SIGSTOP is queued
 * to one thread, and the process stops when that thread next runs: on a busy machine the other
 * threads of a multi-threaded server (nats-server's Go threads, Node's) keep working meanwhile,
 * long enough to answer a request sent right after the signal.
 */
export async function whenStopped(pid: number, timeoutMs = 10_000): Promise<void> {
  const stopped = async () => {
    const tasks = await readdir(`/proc/${pid}/task`);
    const states = await Promise.all(tasks.map(async (task) => {
      const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8');
      // "pid (comm) S …": the state follows the command, which may itself hold ") ".
      const state = stat.lastIndexOf(')') + 2;
      return stat.slice(state, state + 1);
    }));
    return states.every((state) => state === 'T' || state === 't');
  };
  await waitFor(stopped, { timeoutMs, intervalMs: 5, what: `process ${pid} stopped` });
}

export interface TestNats {
  url: string;
  port: number;
  storeDir: string;
  stop(): Promise<void>;
  /** Stops and starts the server on the same port and store (file storage survives). */
  restart(): Promise<void>;
  /** Ends the server with a signal (SIGKILL: a crash), keeping its port and store for start(). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and store, after kill(). */
  start(): Promise<void>;
  /** Sends a signal without waiting (SIGCONT thaws a frozen server). */
  signal(signal: NodeJS.Signals): void;
  /** Freezes the server (SIGSTOP) and resolves once every thread of it has stopped (whenStopped). */
  freeze(): Promise<void>;
}

/** How a test starts nats-server beyond the defaults (JetStream on, anonymous access). */
export interface NatsServerOptions {
  /** A configuration file (`-c`), e.g. deploy/nats/nats-server.conf; it turns JetStream on itself. */
  configFile?: string;
  /** Extra environment of the server process (the users' passwords). */
  env?: Record<string, string>;
  /** The user the readiness probe connects as, when the configuration refuses anonymous clients. */
  probe?: { user: string; pass: string };
  /** Monitoring port (`-m`): /connz shows each connection's authorized user. */
  monitorPort?: number;
  /** Server log file (`-l`). */
  logFile?: string;
}

export async function startNats(options: NatsServerOptions = {}): Promise<TestNats> {
  const storeDir = await mkdtemp(join(tmpdir(), 'weave-nats-'));
  const { port, server } = await onFreePort(async (port) => {
    const server = new NatsServer({ port, storeDir, program: process.env.NATS_SERVER_BIN, ...options });
    await server.start();
    return { port, server };
  });
  return {
    url: server.url,
    port,
    storeDir,
    stop: async () => {
      await server.stop();
      await rm(storeDir, { recursive: true, force: true });
    },
    restart: async () => {
      await server.stop();
      await server.start();
    },
    kill: (signal: NodeJS.Signals = 'SIGKILL') => server.stop(signal),
    start: () => server.start(),
    signal: (signal: NodeJS.Signals) => server.signal(signal),
    freeze: async () => {
      const pid = server.pid;
      if (pid === undefined) throw new Error('nats-server is not running');
      server.signal('SIGSTOP');
      await whenStopped(pid);
    },
  };
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A database name that does not exist yet; the services create it, as in production. */
export function newTestDatabase(): TestDatabase {
  const name = `weave_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
