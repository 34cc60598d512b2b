import { accessSync, constants, statSync } from 'node:fs';

/**
 * How the settings of DESIGN §2 (ServerEnv in #libs/config) turn into connection options: plain
 * functions of the values, without the validation library, so that a short-lived process (the
 * ops CLI) can use them without loading it. #libs/config re-exports them.
 */

export function natsServers(url: string): string[] {
  return url.split(',').map((s) => s.trim()).filter(Boolean);
}

/** How a process authenticates to NATS: a user and password, a creds file, or nothing (anonymous). */
export interface NatsIdentity {
  user?: string;
  pass?: string;
  credsFile?: string;
}

/** The NATS identity of NATS_USER / NATS_PASSWORD / NATS_CREDS (undefined: anonymous). */
export function natsIdentity(env: { NATS_USER?: string; NATS_PASSWORD?: string; NATS_CREDS?: string }): NatsIdentity | undefined {
  if (env.NATS_CREDS) return { credsFile: env.NATS_CREDS };
  if (env.NATS_USER) return { user: env.NATS_USER, pass: env.NATS_PASSWORD };
  return undefined;
}

/** Whether `path` names a regular file this process may read. */
export function isReadableFile(path: unknown): boolean {
  if (typeof path !== 'string' || path === '') return false;
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The TLS settings of a NATS connection (nats.js reads the files when it connects). */
export interface NatsTls {
  caFile: string;
  certFile?: string;
  keyFile?: string;
}

/** NATS_TLS_*: undefined when no CA is set (plain connections, the local default). */
export function natsTls(env: { NATS_TLS_CA_FILE?: string; NATS_TLS_CERT_FILE?: string; NATS_TLS_KEY_FILE?: string }): NatsTls | undefined {
  if (!env.NATS_TLS_CA_FILE) return undefined;
  return { caFile: env.NATS_TLS_CA_FILE, ...(env.NATS_TLS_CERT_FILE ? { certFile: env.NATS_TLS_CERT_FILE, keyFile: env.NATS_TLS_KEY_FILE } : {}) };
}

/**
 * DATABASE_URL as the connection uses it: with DATABASE_SSL_MODE=verify-full, `sslmode=verify-full`
 * (whatever the URL said) and, with DATABASE_SSL_ROOT_CERT, `sslrootcert=<file>` (node-postgres
 * reads both: TLS, the server's certificate checked against that CA and its name against the host).
 * Without DATABASE_SSL_MODE the URL is used as it is.
 */
export function databaseUrl(env: { DATABASE_URL: string; DATABASE_SSL_MODE?: string; DATABASE_SSL_ROOT_CERT?: string }): string {
  if (env.DATABASE_SSL_MODE !== 'verify-full') return env.DATABASE_URL;
  const url = new URL(env.DATABASE_URL);
  url.searchParams.set('sslmode', 'verify-full');
  if (env.DATABASE_SSL_ROOT_CERT) url.searchParams.set('sslrootcert', env.DATABASE_SSL_ROOT_CERT);
  return url.toString();
}
