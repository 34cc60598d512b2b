import { isReadableFile } from '#libs/connections';
import type { OpsEnv } from './ops.env.js';

/**
 * The CLI's settings without loading class-validator and class-transformer (about half of a
 * command's start): the values of OpsEnv checked here by the same rules as its decorators, with
 * the same defaults. Any value these rules refuse sends the environment through `loadEnv(OpsEnv)`
 * itself, which throws the ConfigError the services would, so that an invalid environment is
 * reported exactly as before. test/unit/ops-settings.spec.ts holds the two equal: the variables
 * and defaults against OpsEnv's, and random environments through both.
 */

/** OpsEnv's defaults (ServerEnv's and the CLI's own). */
export const OPS_ENV_DEFAULTS = {
  NATS_URL: 'nats://127.0.0.1:4222',
  EVENTS_MAX_AGE_DAYS: 365,
  DEAD_LETTERS_MAX_AGE_DAYS: 90,
  NATS_STREAM_REPLICAS: 1,
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/weave',
  REDIS_URL: 'redis://127.0.0.1:6379',
  LOG_LEVEL: 'info',
  LOG_FORMAT: 'auto' as OpsEnv['LOG_FORMAT'],
  SHUTDOWN_TIMEOUT_MS: 10000,
  OPS_NATS_TIMEOUT_MS: 2000,
};

/** Every variable OpsEnv declares; the integers among them with their bounds. */
const INTEGERS: Record<string, [number, number]> = {
  EVENTS_MAX_AGE_DAYS: [0, 36500],
  DEAD_LETTERS_MAX_AGE_DAYS: [0, 36500],
  NATS_STREAM_REPLICAS: [1, 5],
  SHUTDOWN_TIMEOUT_MS: [100, 60000],
  OPS_NATS_TIMEOUT_MS: [100, 60000],
};
export const OPS_ENV_VARIABLES = [
  'NATS_URL',
  'NATS_USER',
  'NATS_PASSWORD',
  'NATS_CREDS',
  'EVENTS_MAX_AGE_DAYS',
  'DEAD_LETTERS_MAX_AGE_DAYS',
  'NATS_STREAM_REPLICAS',
  'NATS_TLS_CA_FILE',
  'NATS_TLS_CERT_FILE',
  'NATS_TLS_KEY_FILE',
  'DATABASE_URL',
  'DATABASE_SSL_MODE',
  'DATABASE_SSL_ROOT_CERT',
  'REDIS_URL',
  'REDIS_TLS_CA_FILE',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'SHUTDOWN_TIMEOUT_MS',
  'OPS_NATS_TIMEOUT_MS',
  'NATS_PASSWORD_OPS',
] as const;

/** The values of OpsEnv's rules when they all hold; undefined when any does not. */
export function checkedOpsEnv(source: NodeJS.ProcessEnv): OpsEnv | undefined {
  const values: Record<string, string | number> = {};
  for (const name of OPS_ENV_VARIABLES) {
    const raw = source[name];
    if (raw === undefined || raw === '') continue;
    if (INTEGERS[name]) {
      // loadEnv's coercion: a decimal number becomes a number, anything else stays a string (and fails IsInt).
      if (!/^-?\d+(\.\d+)?$/.test(raw.trim())) return undefined;
      const value = Number(raw);
      const [min, max] = INTEGERS[name];
      if (!Number.isInteger(value) || value < min || value > max) return undefined;
      values[name] = value;
    } else {
      values[name] = raw;
    }
  }
  const env = { ...OPS_ENV_DEFAULTS, ...values } as Record<string, string | number | undefined>;
  const set = (name: string) => env[name] !== undefined;
  const text = (name: string) => env[name] as string;
  if (!/^(nats|tls|ws|wss):\/\/[^,\s]+(,(nats|tls|ws|wss):\/\/[^,\s]+)*$/.test(text('NATS_URL'))) return undefined;
  if (set('NATS_USER') || set('NATS_PASSWORD')) {
    if (!set('NATS_USER') || !/^[A-Za-z0-9_-]+$/.test(text('NATS_USER')) || !set('NATS_PASSWORD')) return undefined;
  }
  if (set('NATS_CREDS') && set('NATS_USER')) return undefined;
  if ((set('NATS_TLS_CA_FILE') || set('NATS_TLS_CERT_FILE')) && !isReadableFile(env.NATS_TLS_CA_FILE)) return undefined;
  if (set('NATS_TLS_CERT_FILE') || set('NATS_TLS_KEY_FILE')) {
    if (!isReadableFile(env.NATS_TLS_CERT_FILE) || !isReadableFile(env.NATS_TLS_KEY_FILE)) return undefined;
  }
  if (!/^postgres(ql)?:\/\/\S+$/.test(text('DATABASE_URL'))) return undefined;
  if ((set('DATABASE_SSL_MODE') || set('DATABASE_SSL_ROOT_CERT')) && env.DATABASE_SSL_MODE !== 'verify-full') return undefined;
  if (set('DATABASE_SSL_ROOT_CERT') && !isReadableFile(env.DATABASE_SSL_ROOT_CERT)) return undefined;
  if (!/^rediss?:\/\/\S+$/.test(text('REDIS_URL'))) return undefined;
  if (set('REDIS_TLS_CA_FILE') && (!isReadableFile(env.REDIS_TLS_CA_FILE) || !text('REDIS_URL').startsWith('rediss://'))) return undefined;
  if (!['auto', 'json', 'pretty'].includes(text('LOG_FORMAT'))) return undefined;
  return env as unknown as OpsEnv;
}

/**
 * The CLI's settings from `source`: those of `loadEnv(OpsEnv, source)`, which runs (and throws
 * its ConfigError) only when a value breaks a rule.
 */
export async function readOpsEnv(source: NodeJS.ProcessEnv = process.env): Promise<OpsEnv> {
  const checked = checkedOpsEnv(source);
  if (checked) return checked;
  const [{ loadEnv }, { OpsEnv }] = await Promise.all([import('#libs/config'), import('./ops.env.js')]);
  return loadEnv(OpsEnv, source);
}

