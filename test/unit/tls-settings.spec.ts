import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ServerEnv, databaseUrl, loadEnv, natsTls, redisTls } from '#libs/config';

/**
 * How the TLS settings become connection options (the connections themselves:
 * test/integration/internal-tls.spec.ts). DATABASE_SSL_MODE=verify-full wins over whatever sslmode
 * DATABASE_URL carries, and node-postgres then verifies the server against the CA file.
 */
const dir = mkdtempSync(join(tmpdir(), 'weave-tls-settings-'));
const ca = join(dir, 'ca.crt');
writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n');

describe('TLS settings', () => {
  it('leaves everything plain by default (local npm start and tests)', () => {
    const env = loadEnv(ServerEnv, {});
    expect(databaseUrl(env)).toBe(env.DATABASE_URL);
    expect(natsTls(env)).toBeUndefined();
    expect(redisTls(env.REDIS_URL, env.REDIS_TLS_CA_FILE)).toBeUndefined();
    expect(new pg.Client({ connectionString: databaseUrl(env) }).ssl).toBe(false);
  });

  it.each(['', '?sslmode=disable', '?sslmode=prefer', '?sslmode=require&sslrootcert=/elsewhere.crt'])(
    'DATABASE_SSL_MODE=verify-full turns DATABASE_URL%s into a verified TLS connection against DATABASE_SSL_ROOT_CERT',
    (query) => {
      const env = loadEnv(ServerEnv, { DATABASE_URL: `postgres://gateway:pw@weave-db-rw:5432/weave${query}`, DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_ROOT_CERT: ca });
      const url = new URL(databaseUrl(env));
      expect(url.searchParams.getAll('sslmode')).toEqual(['verify-full']);
      expect(url.searchParams.getAll('sslrootcert')).toEqual([ca]);
      expect(`${url.username}:${url.password}@${url.host}${url.pathname}`).toBe('gateway:pw@weave-db-rw:5432/weave');
      // node-postgres: TLS, the CA loaded from the file, certificates verified (not rejectUnauthorized: false).
      const ssl = new pg.Client({ connectionString: url.toString() }).ssl as unknown as { ca?: string; rejectUnauthorized?: boolean };
      expect(ssl).toEqual(expect.objectContaining({ ca: expect.stringContaining('stand-in') }));
      expect(ssl.rejectUnauthorized).not.toBe(false);
    },
  );

  it('gives NATS and Redis their CA', () => {
    const env = loadEnv(ServerEnv, { NATS_URL: 'tls://nats:4222', NATS_TLS_CA_FILE: ca, REDIS_URL: 'rediss://weave:pw@redis:6379', REDIS_TLS_CA_FILE: ca });
    expect(natsTls(env)).toEqual({ caFile: ca });
    expect(redisTls(env.REDIS_URL, env.REDIS_TLS_CA_FILE)?.ca?.toString()).toContain('stand-in');
    // rediss:// without a CA file: TLS against the system's CAs.
    expect(redisTls('rediss://redis:6379', undefined)).toEqual({});
  });
});
