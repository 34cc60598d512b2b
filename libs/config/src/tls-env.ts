import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { ValidateBy, type ValidationOptions } from 'class-validator';

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

/**
 * A path to a file that exists and is readable now (a CA bundle, a certificate, a key), checked at
 * start. `requiredWith`: the setting that needs this one, named when this one is missing.
 */
export function IsReadableFile(requiredWith?: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isReadableFile',
      validator: {
        validate: isReadableFile,
        defaultMessage: (args) =>
          args?.value === undefined
            ? `${args?.property} must be set with ${requiredWith}`
            : `${args?.property} must be the path of a readable file; there is none at ${JSON.stringify(args?.value)}`,
      },
    },
    options,
  );
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

/** ioredis's `tls` option for REDIS_URL / REDIS_TLS_CA_FILE: undefined for a redis:// URL. */
export function redisTls(url: string, caFile: string | undefined): { ca?: Buffer } | undefined {
  if (!url.startsWith('rediss://')) return undefined;
  return caFile ? { ca: readFileSync(caFile) } : {};
}
