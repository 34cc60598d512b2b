import { isIanaTimezone } from '#libs/contracts';
import { cacheControlMaxAgeMs } from '../../apps/gateway/src/auth/id-token.verifier.js';
import { isJsonContentType } from '../../apps/gateway/src/http/raw-input.guard.js';
import { UpdateOnboardingRequestDto } from '../../apps/gateway/src/onboarding/onboarding.dto.js';
import { validateBody } from '../support/http-input.js';

describe('isIanaTimezone (shared by gateway, timezone-settings and reporting)', () => {
  it('accepts every zone the runtime lists', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    expect(zones.length).toBeGreaterThan(300);
    expect(zones.filter((zone) => !isIanaTimezone(zone))).toEqual([]);
  });

  it.each(['+05:00', '-0300', 'UTC+5', 'GMT-3', '', ' UTC', 'Mars/Base', 'asia/kathmandu', 'Asia/Kathmandu/', 5, null, undefined, {}])(
    'refuses %j',
    (name) => expect(isIanaTimezone(name)).toBe(false),
  );
});

describe('PATCH /agent/update-onboarding body (UpdateOnboardingRequestDto)', () => {
  it('is exactly {reporting_timezone: <IANA name>}', async () => {
    expect(await validateBody({ reporting_timezone: 'Australia/Lord_Howe' }, UpdateOnboardingRequestDto)).toEqual({ ok: true, value: { reporting_timezone: 'Australia/Lord_Howe' } });
    for (const body of [null, [], 'UTC', {}, { reporting_timezone: 5 }, { reporting_timezone: '+05:00' }, { reporting_timezone: 'UTC', x: 1 }]) {
      expect(await validateBody(body, UpdateOnboardingRequestDto)).toMatchObject({ ok: false, slug: 'invalid-body' });
    }
  });

  it('takes application/json with an optional UTF-8 charset only', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON; charset=utf-8')).toBe(true);
    for (const type of [undefined, 'text/plain', 'application/json; charset=latin1', 'application/jsonx', 'application/x-www-form-urlencoded']) {
      expect(isJsonContentType(type)).toBe(false);
    }
  });
});

describe('ID-token helpers', () => {
  it('reads max-age from Cache-Control', () => {
    expect(cacheControlMaxAgeMs('public, max-age=600')).toBe(600_000);
    expect(cacheControlMaxAgeMs('no-store')).toBe(0);
    expect(cacheControlMaxAgeMs(null)).toBeUndefined();
    expect(cacheControlMaxAgeMs('public')).toBeUndefined();
  });
});
