import 'reflect-metadata';
import { ConfigError, ServerEnv, loadEnv, natsIdentity, streamRetention } from '#libs/config';
import { OpsEnv, opsNatsIdentity } from '../../apps/ops/src/config/ops.env.js';

/** NATS_USER / NATS_PASSWORD / NATS_CREDS and the stream retention settings of every service (libs/config). */

function problems(source: Record<string, string>): string {
  try {
    loadEnv(ServerEnv, source);
    return '';
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

it('is anonymous without settings, a user with NATS_USER and NATS_PASSWORD, a creds file with NATS_CREDS', () => {
  expect(natsIdentity(loadEnv(ServerEnv, {}))).toBeUndefined();
  expect(natsIdentity(loadEnv(ServerEnv, { NATS_USER: 'gateway', NATS_PASSWORD: 'psecret' }))).toEqual({ user: 'gateway', pass: 'psecret' });
  expect(natsIdentity(loadEnv(ServerEnv, { NATS_CREDS: '/var/run/nats/user.creds' }))).toEqual({ credsFile: '/var/run/nats/user.creds' });
});

it('refuses half an identity or two of them, naming the variables and never the password', () => {
  expect(problems({ NATS_USER: 'gateway' })).toMatch(/NATS_PASSWORD must be set with NATS_USER/);
  expect(problems({ NATS_PASSWORD: 'pleaked' })).toMatch(/NATS_USER must be set with NATS_PASSWORD/);
  expect(problems({ NATS_PASSWORD: 'pleaked' })).not.toContain('pleaked');
  expect(problems({ NATS_USER: 'gateway', NATS_PASSWORD: 'pleaked', NATS_CREDS: '/x.creds' })).toMatch(/NATS_CREDS and NATS_USER are exclusive/);
  expect(problems({ NATS_USER: 'gate way', NATS_PASSWORD: 'p' })).toMatch(/NATS_USER/);
});

it('reads the streams’ retention in days, 0 meaning forever, with documented defaults', () => {
  expect(streamRetention(loadEnv(ServerEnv, {}))).toEqual({ eventsMaxAgeDays: 365, deadLettersMaxAgeDays: 90 });
  expect(streamRetention(loadEnv(ServerEnv, { EVENTS_MAX_AGE_DAYS: '0', DEAD_LETTERS_MAX_AGE_DAYS: '7' }))).toEqual({ eventsMaxAgeDays: 0, deadLettersMaxAgeDays: 7 });
  expect(problems({ EVENTS_MAX_AGE_DAYS: '-1' })).toMatch(/EVENTS_MAX_AGE_DAYS/);
  expect(problems({ DEAD_LETTERS_MAX_AGE_DAYS: '1.5' })).toMatch(/DEAD_LETTERS_MAX_AGE_DAYS/);
});

it('reads the streams’ replicas: 1 by default (one server), up to 5 (a cluster), never 0', () => {
  expect(loadEnv(ServerEnv, {}).NATS_STREAM_REPLICAS).toBe(1);
  expect(loadEnv(ServerEnv, { NATS_STREAM_REPLICAS: '3' }).NATS_STREAM_REPLICAS).toBe(3);
  expect(problems({ NATS_STREAM_REPLICAS: '0' })).toMatch(/NATS_STREAM_REPLICAS/);
  expect(problems({ NATS_STREAM_REPLICAS: '6' })).toMatch(/NATS_STREAM_REPLICAS/);
});

it('the ops CLI connects as ops with NATS_PASSWORD_OPS, unless NATS_USER or NATS_CREDS name another identity', () => {
  expect(opsNatsIdentity(loadEnv(OpsEnv, {}))).toBeUndefined();
  expect(opsNatsIdentity(loadEnv(OpsEnv, { NATS_PASSWORD_OPS: 'pops' }))).toEqual({ user: 'ops', pass: 'pops' });
  expect(opsNatsIdentity(loadEnv(OpsEnv, { NATS_PASSWORD_OPS: 'pops', NATS_USER: 'producer', NATS_PASSWORD: 'pprod' }))).toEqual({ user: 'producer', pass: 'pprod' });
});

describe('ConfigError.lines', () => {
  it('gives one line per invalid setting, the reasons of one setting joined, the name not repeated', () => {
    let refusal: unknown;
    try {
      loadEnv(ServerEnv, { SHUTDOWN_TIMEOUT_MS: '5', NATS_URL: 'http://x' });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as ConfigError).lines('svc').sort()).toEqual([
      'svc: invalid setting NATS_URL: must be nats:// URLs, comma separated',
      'svc: invalid setting SHUTDOWN_TIMEOUT_MS: must not be less than 100',
    ]);
    expect(new ConfigError([{ name: 'A', reasons: ['A must be x', 'must be y'] }]).lines('svc')).toEqual(['svc: invalid setting A: must be x; must be y']);
  });
});
