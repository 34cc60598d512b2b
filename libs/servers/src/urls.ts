/** The three servers the system needs (DESIGN §2), by the name people know them by. */
export type ServerKind = 'nats' | 'postgres' | 'redis';

export const SERVER_LABELS: Record<ServerKind, string> = { nats: 'NATS', postgres: 'PostgreSQL', redis: 'Redis' };

/** The variable that holds each server's URL. */
export const SERVER_URL_VARIABLES: Record<ServerKind, string> = { nats: 'NATS_URL', postgres: 'DATABASE_URL', redis: 'REDIS_URL' };

const DEFAULT_PORTS: Record<ServerKind, number> = { nats: 4222, postgres: 5432, redis: 6379 };

export interface ServerAddress {
  host: string;
  port: number;
}

/** Host and port a URL points at (the server's standard port when it names none). */
export function serverAddress(kind: ServerKind, url: string): ServerAddress {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: parsed.port ? Number(parsed.port) : DEFAULT_PORTS[kind] };
}

/** Whether the URL points at this machine, where the launcher may start a server of its own. */
export function isLoopback(address: ServerAddress): boolean {
  return address.host === 'localhost' || address.host === '::1' || /^127(\.\d{1,3}){3}$/.test(address.host);
}
