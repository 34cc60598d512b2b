import { connect as natsConnect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { natsServers } from '#libs/config';
import type { ServerKind } from './urls.js';

export type ProbeResult = { ok: true } | { ok: false; error: unknown };

/** Rejects with a TimeoutError-like error when `promise` takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError' })), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * A NATS server answers when a client completes the handshake (and authenticates, if asked to).
 * With `serverName`, only the server of that name counts: another one on the port (a port taken
 * between choosing it and binding it) is not an answer.
 */
export async function probeNats(
  url: string,
  timeoutMs = 2000,
  auth?: { user: string; pass: string },
  serverName?: string,
): Promise<ProbeResult> {
  try {
    const connection = await natsConnect({ servers: natsServers(url), reconnect: false, timeout: timeoutMs, name: 'probe', ...auth });
    const answered = connection.info?.server_name;
    await connection.close();
    if (serverName !== undefined && answered !== serverName) {
      return { ok: false, error: new Error(`${url} is answered by another nats-server (${answered ?? 'no name'}, not ${serverName})`) };
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * PostgreSQL answers when it accepts the URL's user. A missing database is an answer too: the
 * services create theirs (DESIGN §2).
 */
export async function probePostgres(url: string, timeoutMs = 2000): Promise<ProbeResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await within(
      client.connect().then(() => client.query('SELECT 1')),
      timeoutMs + 500,
    );
    return { ok: true };
  } catch (error) {
    if ((error as { code?: string }).code === '3D000') return { ok: true };
    return { ok: false, error };
  } finally {
    // end() waits for a server that may never answer; the socket is what must go.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }
}

/**
 * Redis answers PING (after AUTH when the URL carries a password). With `pid`, only the server of
 * that process counts (INFO's process_id): another one on the port is not an answer.
 */
export async function probeRedis(url: string, timeoutMs = 2000, pid?: number): Promise<ProbeResult> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  // connect() rejects with a generic "Connection is closed."; the cause comes as an event.
  let cause: unknown;
  redis.on('error', (error) => {
    cause ??= error;
  });
  try {
    await within(
      redis.connect().then(() => redis.ping()),
      timeoutMs + 500,
    );
    if (pid !== undefined) {
      const answered = /^process_id:(\d+)/m.exec(await within(redis.info('server'), timeoutMs + 500))?.[1];
      if (Number(answered) !== pid) return { ok: false, error: new Error(`${url} is answered by another redis-server (pid ${answered ?? '?'}, not ${pid})`) };
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, error: cause ?? error };
  } finally {
    // disconnect() on a client that already gave up arms a 2 s timer that keeps a process alive.
    if (redis.status !== 'end') await redis.quit().catch(() => redis.disconnect());
  }
}

export const PROBES: Record<ServerKind, (url: string, timeoutMs?: number) => Promise<ProbeResult>> = {
  nats: probeNats,
  postgres: probePostgres,
  redis: probeRedis,
};
