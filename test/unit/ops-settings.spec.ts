import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { getMetadataStorage } from 'class-validator';
import { ConfigError, loadEnv } from '#libs/config';
import { OpsEnv } from '../../apps/ops/src/config/ops.env.js';
import { OPS_ENV_DEFAULTS, OPS_ENV_VARIABLES, checkedOpsEnv, readOpsEnv } from '../../apps/ops/src/config/ops-settings.js';

/**
 * The ops CLI checks its settings without class-validator (apps/ops/src/config/ops-settings.ts)
 * and falls back to loadEnv(OpsEnv) when a value breaks a rule: both must give the same settings,
 * and the same ConfigError, for any environment.
 */
const dir = mkdtempSync(join(tmpdir(), 'ops-settings-'));
const readable = join(dir, 'ca.pem');
writeFileSync(readable, 'not checked beyond being a readable file');
const missing = join(dir, 'missing.pem');

/** A few valid and invalid values of each variable. */
const VALUES: Record<string, string[]> = {
  NATS_URL: ['nats://127.0.0.1:4222', 'nats://a:1,tls://b:2', 'http://x', 'nats://a b', 'nats://a,'],
  NATS_USER: ['ops', 'producer-1', 'bad user', ''],
  NATS_PASSWORD: ['secret', ''],
  NATS_CREDS: [readable, missing],
  EVENTS_MAX_AGE_DAYS: ['0', '365', '36500', '36501', '-1', '1.5', '2.0', 'ten', ' 7 '],
  DEAD_LETTERS_MAX_AGE_DAYS: ['90', '0', '99999'],
  NATS_STREAM_REPLICAS: ['1', '3', '5', '6', '0'],
  NATS_TLS_CA_FILE: [readable, missing],
  NATS_TLS_CERT_FILE: [readable, missing],
  NATS_TLS_KEY_FILE: [readable, missing],
  DATABASE_URL: ['postgres://postgres@127.0.0.1:5432/weave', 'postgresql://u@h/db?sslmode=require', 'mysql://x', 'postgres://a b'],
  DATABASE_SSL_MODE: ['verify-full', 'require'],
  DATABASE_SSL_ROOT_CERT: [readable, missing],
  REDIS_URL: ['redis://127.0.0.1:6379', 'rediss://r:6380', 'http://r'],
  REDIS_TLS_CA_FILE: [readable, missing],
  LOG_LEVEL: ['debug', 'info'],
  LOG_FORMAT: ['auto', 'json', 'pretty', 'xml'],
  SHUTDOWN_TIMEOUT_MS: ['100', '60000', '99', '60001'],
  OPS_NATS_TIMEOUT_MS: ['100', '2000', '60000', '50', '70000', 'x'],
  NATS_PASSWORD_OPS: ['pops'],
};

async function outcome(load: () => unknown): Promise<{ env?: Record<string, unknown>; problems?: string[] }> {
  try {
    return { env: { ...(await load()) as Record<string, unknown> } };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { problems: error.problems };
  }
}

describe('ops CLI settings', () => {
  it('declares the variables and the defaults of OpsEnv', () => {
    const declared = getMetadataStorage()
      .getTargetValidationMetadatas(OpsEnv, '', true, false)
      .map((metadata) => metadata.propertyName);
    expect([...new Set(declared)].sort()).toEqual([...OPS_ENV_VARIABLES].sort());
    expect(Object.keys(VALUES).sort()).toEqual([...OPS_ENV_VARIABLES].sort());
    const defaults = Object.fromEntries(Object.entries(new OpsEnv()).filter(([, value]) => value !== undefined));
    expect(defaults).toEqual(OPS_ENV_DEFAULTS);
  });

  it('takes an empty environment without class-validator, with the defaults', async () => {
    expect(checkedOpsEnv({})).toEqual(OPS_ENV_DEFAULTS);
    expect({ ...(await readOpsEnv({})) }).toEqual({ ...loadEnv(OpsEnv, {}) });
  });

  it('gives what loadEnv(OpsEnv) gives, settings or ConfigError, for any environment', async () => {
    // Each variable set one time in five, so that valid environments are common enough.
    const environment = fc
      .record(
        Object.fromEntries(
          Object.entries(VALUES).map(([name, values]) => [
            name,
            fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary: fc.constantFrom(...values), weight: 1 }),
          ]),
        ),
      )
      .map((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Record<string, string>);
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(environment, async (source) => {
        if (checkedOpsEnv(source)) fast++;
        const expected = await outcome(() => loadEnv(OpsEnv, source));
        expect(await outcome(() => readOpsEnv(source))).toEqual(expected);
        // Accepted without class-validator only what class-validator accepts.
        if (checkedOpsEnv(source)) expect(expected.env).toBeDefined();
      }),
      { numRuns: 500 },
    );
    // Valid environments are common enough among these that the fast path is exercised.
    expect(fast).toBeGreaterThan(20);
  });

  it('accepts each valid value alone without class-validator', () => {
    for (const [name, values] of Object.entries(VALUES)) {
      for (const value of values) {
        const valid = (() => {
          try {
            loadEnv(OpsEnv, { [name]: value });
            return true;
          } catch {
            return false;
          }
        })();
        // A lone NATS_PASSWORD needs NATS_USER, a lone REDIS_TLS_CA_FILE a rediss:// URL: loadEnv refuses those.
        expect({ name, value, fast: checkedOpsEnv({ [name]: value }) !== undefined }).toEqual({ name, value, fast: valid });
      }
    }
  });
});
