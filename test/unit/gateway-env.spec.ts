import 'reflect-metadata';
import { cidrList, isCidr, loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { configProblems } from '../support/service-envs.js';

/** The gateway's settings of issue 12: tracking secret, link TTL, per-address tracking limit, trusted proxies. */
const problems = (source: Record<string, string>): string[] => configProblems(GatewayEnv, source);

describe('GatewayEnv (issue 12)', () => {
  it('holds no tracking secret by default, and the new settings have their documented defaults', () => {
    const env = loadEnv(GatewayEnv, {});
    expect(env.TRACKING_SIGNING_SECRET).toBeUndefined();
    expect(env.TRACKING_SIGNING_SECRET_REQUIRED).toBe(false);
    expect(env.TRACKING_LINK_TTL_DAYS).toBe(30);
    expect(env.TRACKING_LIMIT_PER_IP_PER_MINUTE).toBe(600);
    expect(env.TRUSTED_PROXIES).toBeUndefined();
  });

  it('refuses to start without the secret when TRACKING_SIGNING_SECRET_REQUIRED is true', () => {
    expect(problems({ TRACKING_SIGNING_SECRET_REQUIRED: 'true' }).join('\n')).toMatch(/^TRACKING_SIGNING_SECRET: .*must be set/m);
    expect(problems({ TRACKING_SIGNING_SECRET_REQUIRED: 'true', TRACKING_SIGNING_SECRET: 'x'.repeat(31) }).join('\n')).toMatch(/^TRACKING_SIGNING_SECRET: .*at least 32 bytes/m);
    expect(problems({ TRACKING_SIGNING_SECRET_REQUIRED: 'true', TRACKING_SIGNING_SECRET: 'a-random-secret-of-32-characters' })).toEqual([]);
    expect(problems({ TRACKING_SIGNING_SECRET_REQUIRED: 'maybe' }).join('\n')).toMatch(/^TRACKING_SIGNING_SECRET_REQUIRED: /m);
  });

  it('takes tracking secrets of at least 32 bytes (UTF-8 bytes, not characters), current and previous alike, without echoing them', () => {
    const short = 'short-secret-'.padEnd(31, '0');
    for (const name of ['TRACKING_SIGNING_SECRET', 'TRACKING_SIGNING_SECRET_PREVIOUS']) {
      const found = problems({ [name]: short });
      expect(found).toEqual([`${name}: ${name} must be at least 32 bytes; choose a random one (openssl rand -base64 48)`]);
      expect(problems({ [name]: `${short}1` })).toEqual([]);
      // 16 characters of two bytes each: 32 bytes, accepted; 15 of them and one ASCII character: 16 characters, 31 bytes, refused.
      expect(problems({ [name]: 'é'.repeat(16) })).toEqual([]);
      expect(problems({ [name]: `${'é'.repeat(15)}x` })).toHaveLength(1);
    }
    expect(loadEnv(GatewayEnv, { TRACKING_SIGNING_SECRET_PREVIOUS: 'p'.repeat(32) }).TRACKING_SIGNING_SECRET_PREVIOUS).toHaveLength(32);
  });

  it('refuses the tracking secret this repository once published, as current or previous secret, without echoing it', () => {
    const published = ['dev', 'only', 'tracking', 'signing', 'secret', 'do', 'not', 'use', 'in', 'production'].join('-');
    for (const name of ['TRACKING_SIGNING_SECRET', 'TRACKING_SIGNING_SECRET_PREVIOUS']) {
      const found = problems({ [name]: published });
      expect(found).toEqual([expect.stringMatching(new RegExp(`^${name}: .*published`))]);
      expect(found.join('\n')).not.toContain(published);
    }
  });

  it('takes TRACKING_LINK_TTL_DAYS from 1 to 3650 days and TRACKING_LIMIT_PER_IP_PER_MINUTE ≥ 0', () => {
    expect(loadEnv(GatewayEnv, { TRACKING_LINK_TTL_DAYS: '7', TRACKING_LIMIT_PER_IP_PER_MINUTE: '0' })).toMatchObject({ TRACKING_LINK_TTL_DAYS: 7, TRACKING_LIMIT_PER_IP_PER_MINUTE: 0 });
    const onlyAbout = (name: string, found: string[]) => ({ some: found.length > 0, all: found.every((p) => p.startsWith(`${name}: `)) });
    for (const ttl of ['0', '3651', '1.5', 'forever']) expect(onlyAbout('TRACKING_LINK_TTL_DAYS', problems({ TRACKING_LINK_TTL_DAYS: ttl }))).toEqual({ some: true, all: true });
    expect(onlyAbout('TRACKING_LIMIT_PER_IP_PER_MINUTE', problems({ TRACKING_LIMIT_PER_IP_PER_MINUTE: '-1' }))).toEqual({ some: true, all: true });
  });

  it('takes TRUSTED_PROXIES as a comma-separated list of addresses and CIDR ranges, naming the entry it refuses', () => {
    const env = loadEnv(GatewayEnv, { TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.7,2001:db8::/32 ,::1' });
    expect(cidrList(env.TRUSTED_PROXIES)).toEqual(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1']);
    for (const bad of ['10.0.0.0/33', 'loopback', '10.0.0/8', '2001:db8::/129', '10.0.0.0/8/1', '10.0.0.0/-1']) {
      expect(problems({ TRUSTED_PROXIES: `127.0.0.1/32,${bad}` })).toEqual([`TRUSTED_PROXIES: TRUSTED_PROXIES must be IP addresses or CIDR ranges, comma separated; "${bad}" is not one`]);
    }
    expect(['0.0.0.0/0', '::/0', '127.0.0.1'].every(isCidr)).toBe(true);
    expect(cidrList(undefined)).toEqual([]);
  });
});

describe('GatewayEnv: identity cache', () => {
  it('keeps identity lookups up to 60 s by default and polls the identity version every 250 ms', () => {
    expect(loadEnv(GatewayEnv, {})).toMatchObject({ IDENTITY_CACHE_TTL_MS: 60000, IDENTITY_VERSION_POLL_MS: 250 });
    expect(loadEnv(GatewayEnv, { IDENTITY_CACHE_TTL_MS: '600000', IDENTITY_VERSION_POLL_MS: '50' })).toMatchObject({ IDENTITY_CACHE_TTL_MS: 600000, IDENTITY_VERSION_POLL_MS: 50 });
  });

  it('refuses a poll interval outside 50–500 ms (staleness must stay within a second) and a TTL over 10 minutes', () => {
    const onlyAbout = (name: string, found: string[]) => ({ some: found.length > 0, all: found.every((p) => p.startsWith(`${name}: `)) });
    for (const poll of ['49', '501', '0', 'often']) expect(onlyAbout('IDENTITY_VERSION_POLL_MS', problems({ IDENTITY_VERSION_POLL_MS: poll }))).toEqual({ some: true, all: true });
    for (const ttl of ['600001', '-1']) expect(onlyAbout('IDENTITY_CACHE_TTL_MS', problems({ IDENTITY_CACHE_TTL_MS: ttl }))).toEqual({ some: true, all: true });
  });
});
