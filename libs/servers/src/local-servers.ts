import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { describeConnectionError, isAuthorizationError, isConnectionRefused, redactUrl } from '#libs/connections';
import { INSTALL_HINTS } from './install-hints.js';
import { NatsServer } from './nats-server.js';
import { PostgresCluster } from './postgres-cluster.js';
import { PROBES } from './probes.js';
import { findPostgresBinaries, findProgram } from './programs.js';
import { RedisServer } from './redis-server.js';
import { SERVER_LABELS, SERVER_URL_VARIABLES, isLoopback, serverAddress, type ServerKind } from './urls.js';

export interface LocalServersOptions {
  /** The URL of each server wanted (the services' NATS_URL, DATABASE_URL, REDIS_URL). */
  urls: Partial<Record<ServerKind, string>>;
  /** Where private servers keep their data: `<dataDir>/nats`, `/postgres`, `/redis`. */
  dataDir: string;
  /** PATH and the program overrides NATS_SERVER_BIN, REDIS_SERVER_BIN, PG_BIN_DIR. */
  env?: NodeJS.ProcessEnv;
  /**
   * How a private nats-server runs when one is started: a configuration file with users (DESIGN
   * §8, e.g. deploy/nats/nats-server.conf) and the user its readiness probe connects as.
   */
  nats?: { configFile?: string; probe?: { user: string; pass: string } };
  probeTimeoutMs?: number;
}

export type ServerOutcome =
  | { kind: ServerKind; url: string; state: 'reachable' }
  | { kind: ServerKind; url: string; state: 'started'; dataDir: string; logFile: string }
  | { kind: ServerKind; url: string; state: 'failed'; reason: string };

export interface LocalServers {
  outcomes: ServerOutcome[];
  /** Whether every server wanted answers (found running or started). */
  ok: boolean;
  /** Stops the servers started here, gracefully (JetStream and PostgreSQL flush their data). */
  stop(): Promise<void>;
  /** Last resort when nothing can be awaited (process exit): signals each server to shut down. */
  stopNow(): void;
}

interface Started {
  stop(): Promise<void>;
  stopNow(): void;
}

/**
 * How a private nats-server should run for an environment: when NATS passwords are given
 * (NATS_PASSWORD_<USER>, DESIGN §8), with `configFile` (deploy/nats/nats-server.conf, which
 * reads them) and probed as one of those users (the gateway's when given); else anonymous.
 */
export function privateNatsSettings(env: NodeJS.ProcessEnv, configFile: string): LocalServersOptions['nats'] {
  const passwords = Object.keys(env).filter((name) => name.startsWith('NATS_PASSWORD_') && env[name]).sort();
  if (passwords.length === 0) return undefined;
  const variable = passwords.includes('NATS_PASSWORD_GATEWAY') ? 'NATS_PASSWORD_GATEWAY' : passwords[0];
  const user = variable.slice('NATS_PASSWORD_'.length).toLowerCase().replace(/_/g, '-');
  return { configFile, probe: { user, pass: env[variable]! } };
}

/** A path as a person at `cwd` would type it: relative inside it, absolute elsewhere. */
function shownPath(path: string, cwd: string): string {
  const inside = relative(cwd, path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}

/** One line for a person: which server, where, and what became of it. */
export function describeServerOutcome(outcome: ServerOutcome, cwd = process.cwd()): string {
  const label = SERVER_LABELS[outcome.kind];
  switch (outcome.state) {
    case 'reachable':
      return `${label}: using the server at ${outcome.url}`;
    case 'started':
      return `${label}: started a private server at ${outcome.url} (data in ${shownPath(outcome.dataDir, cwd)}, log ${shownPath(outcome.logFile, cwd)})`;
    case 'failed':
      return `${label}: ${outcome.reason}`;
  }
}

async function startPrivate(kind: ServerKind, url: string, options: LocalServersOptions): Promise<{ server: Started; dataDir: string; logFile: string }> {
  const env = options.env ?? process.env;
  const { host, port } = serverAddress(kind, url);
  const dataDir = resolve(options.dataDir, kind);
  await mkdir(dataDir, { recursive: true });
  switch (kind) {
    case 'nats': {
      const program = findProgram('nats-server', 'NATS_SERVER_BIN', env);
      if (!program) throw new MissingProgram('nats-server is not installed');
      const logFile = join(dataDir, 'nats-server.log');
      const server = new NatsServer({ host, port, storeDir: dataDir, program, logFile, ...options.nats });
      await server.start();
      return { server: { stop: () => server.stop('SIGTERM'), stopNow: () => server.signal('SIGTERM') }, dataDir, logFile };
    }
    case 'redis': {
      const program = findProgram('redis-server', 'REDIS_SERVER_BIN', env);
      if (!program) throw new MissingProgram('redis-server is not installed');
      const parsed = new URL(url);
      const logFile = join(dataDir, 'redis.log');
      const server = new RedisServer({
        host,
        port,
        dir: dataDir,
        program,
        logFile,
        username: decodeURIComponent(parsed.username) || undefined,
        password: decodeURIComponent(parsed.password) || undefined,
      });
      await server.start();
      return { server: { stop: () => server.stop('SIGTERM'), stopNow: () => server.signal('SIGTERM') }, dataDir, logFile };
    }
    case 'postgres': {
      const { binDir, searched } = findPostgresBinaries(env);
      if (!binDir) throw new MissingProgram(`PostgreSQL's server programs (initdb, pg_ctl) are not installed (looked in ${searched.join(', ')})`);
      const cluster = new PostgresCluster({ binDir, dir: dataDir, host, port, superuser: decodeURIComponent(new URL(url).username) || 'postgres' });
      await cluster.start();
      return { server: { stop: () => cluster.stop('fast'), stopNow: () => cluster.stopNow() }, dataDir, logFile: cluster.logFile };
    }
  }
}

class MissingProgram extends Error {}

/**
 * Makes the servers of `urls` available for a development run (the launcher of `npm start`,
 * `npm run demo`): each that answers at its URL is used as it is; each that does not, when its
 * URL is on this machine and its program is installed, is started privately on that address
 * with its data under `dataDir` (kept across runs). When one is neither reachable nor
 * startable, the ones started here are stopped again and `ok` is false: the outcomes say why,
 * one line each.
 */
export async function provideLocalServers(options: LocalServersOptions): Promise<LocalServers> {
  const started: Started[] = [];
  const kinds = (Object.keys(options.urls) as ServerKind[]).filter((kind) => options.urls[kind]);
  const outcomes = await Promise.all(
    kinds.map(async (kind): Promise<ServerOutcome> => {
      const url = options.urls[kind]!;
      const shown = redactUrl(url);
      const variable = SERVER_URL_VARIABLES[kind];
      let address;
      try {
        address = serverAddress(kind, url);
      } catch {
        return { kind, url: shown, state: 'failed', reason: `${variable} is not a URL; set it to a ${kind}:// URL` };
      }
      const probe = await PROBES[kind](url, options.probeTimeoutMs);
      // NATS credentials are each service's own (not in the URL): a server that refuses an
      // anonymous probe is there.
      if (probe.ok || (kind === 'nats' && isAuthorizationError(probe.error))) return { kind, url: shown, state: 'reachable' };
      const why = describeConnectionError(probe.error);
      const tried = `no server answers at ${shown} (${why})`;
      if (!isConnectionRefused(probe.error)) {
        return { kind, url: shown, state: 'failed', reason: `${tried}; check ${variable}` };
      }
      if (!isLoopback(address)) {
        return { kind, url: shown, state: 'failed', reason: `${tried}; it is not on this machine, so none can be started here: check ${variable}` };
      }
      try {
        const { server, dataDir, logFile } = await startPrivate(kind, url, options);
        started.push(server);
        return { kind, url: shown, state: 'started', dataDir, logFile };
      } catch (error) {
        if (error instanceof MissingProgram) {
          return { kind, url: shown, state: 'failed', reason: `${tried}; ${error.message}, so none could be started here. Get it: ${INSTALL_HINTS[kind]}` };
        }
        return { kind, url: shown, state: 'failed', reason: `${tried}, and a private server did not start: ${(error as Error).message}` };
      }
    }),
  );
  const stop = async () => {
    await Promise.all(started.splice(0).map((server) => server.stop().catch(() => server.stopNow())));
  };
  const ok = outcomes.every((outcome) => outcome.state !== 'failed');
  if (!ok) await stop();
  return {
    outcomes,
    ok,
    stop,
    stopNow: () => {
      for (const server of started.splice(0)) {
        try {
          server.stopNow();
        } catch {
          // already gone
        }
      }
    },
  };
}
