import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresCluster, RedisServer, findPostgresBinaries, type PostgresStopMode } from '#libs/servers';
import { onFreePort } from './servers.js';

/**
 * Servers a fault test owns outright: its own PostgreSQL cluster and Redis, on their own ports
 * and data directories under a temp dir, so that a test can stop, kill and restart them without
 * touching the machine's shared servers (or another test's). A private nats-server is
 * `startNats()` of servers.ts (file storage, restartable on the same port and store). All three
 * are the server processes of #libs/servers, which the launcher of `npm start` uses too.
 */

export interface PrivatePostgres {
  port: number;
  /** Data directory (owned by the postgres user when the tests run as root). */
  dataDir: string;
  /** Server log (pg_ctl -l): errors such as "deadlock detected" land here. */
  logFile: string;
  /** URL of a database on this cluster (created on first use by the services). */
  url(database: string): string;
  /** `immediate` is a crash as far as the data is concerned: no checkpoint, recovery at start. */
  stop(options?: { mode?: PostgresStopMode }): Promise<void>;
  start(): Promise<void>;
  restart(options?: { mode?: PostgresStopMode }): Promise<void>;
  log(): Promise<string>;
  /** Stops the server (immediate) and removes its directory. */
  destroy(): Promise<void>;
}

/** A PostgreSQL cluster of its own (initdb in a temp dir, trust auth, 127.0.0.1 only, fsync on). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const { binDir, searched } = findPostgresBinaries();
  if (!binDir) throw new Error(`no PostgreSQL server programs found (looked in ${searched.join(', ')}); set PG_BIN_DIR`);
  const root = await mkdtemp(join(tmpdir(), 'weave-pg-'));
  const cluster = await onFreePort(async (port) => {
    // The same directory on every try: the cluster is made once, and each start writes its port.
    const cluster = new PostgresCluster({ binDir, dir: root, port, settings: { fsync: 'on', max_connections: 200 } });
    await cluster.start();
    return cluster;
  });
  const stop = async ({ mode = 'fast' }: { mode?: PostgresStopMode } = {}) => cluster.stop(mode);
  return {
    port: cluster.port,
    dataDir: cluster.dataDir,
    logFile: cluster.logFile,
    url: (database) => cluster.url(database),
    stop,
    start: () => cluster.start(),
    restart: async (options) => {
      await stop(options);
      await cluster.start();
    },
    log: () => cluster.log(),
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
  const dir = await mkdtemp(join(tmpdir(), 'weave-redis-'));
  const { port, server } = await onFreePort(async (port) => {
    const server = new RedisServer({ port, dir, program: process.env.REDIS_SERVER_BIN, ...options });
    await server.start();
    return { port, server };
  });
  const stop = (signal: NodeJS.Signals = 'SIGKILL') => server.stop(signal);
  return {
    port,
    url: server.url,
    stop,
    start: () => server.start(),
    running: () => server.running(),
    destroy: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
