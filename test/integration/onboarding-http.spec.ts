import { expectProblem as problemOf, seedPlatform, startGateway, startIdentityProvider, useTestStack, type ServiceUnderTest } from '../support/index.js';
import { patchOnboarding, signIdToken, startTimezoneSettings } from '../support/oidc.js';
import type { TimezoneSettingsEnv } from '../../apps/timezone-settings/src/config/timezone-settings.env.js';

/** PATCH /agent/update-onboarding over real HTTP: media type, body rules, idempotence, 503. */
const stack = useTestStack();
let timezone: ServiceUnderTest<TimezoneSettingsEnv> | undefined;
let base: string;
let token: string;

async function expectProblem(response: Response, status: number, slug: string): Promise<string> {
  return (await problemOf(response, status, slug)).detail;
}

beforeAll(async () => {
  const { jwks, key } = await startIdentityProvider(stack, ['ES256']);
  timezone = await startTimezoneSettings(stack.urls);
  stack.atEnd(() => timezone?.close());
  ({ base } = await startGateway(stack, { jwksUrl: jwks.url }));
  await seedPlatform(stack, 'agent_onb', { owner: 'uid_onb', keys: [] });
  token = await signIdToken(key, { sub: 'uid_onb' });
});

describe('PATCH /agent/update-onboarding', () => {
  it('200 with {agent_id, reporting_timezone, updated_at}; the same value twice changes nothing', async () => {
    const first = await patchOnboarding(base, token, { reporting_timezone: 'Australia/Lord_Howe' });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-request-id')).toBeTruthy();
    const body = (await first.json()) as Record<string, string>;
    expect(Object.keys(body).sort()).toEqual(['agent_id', 'reporting_timezone', 'updated_at']);
    expect(body).toMatchObject({ agent_id: 'agent_onb', reporting_timezone: 'Australia/Lord_Howe' });
    expect(body.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const second = await patchOnboarding(base, token, { reporting_timezone: 'Australia/Lord_Howe' });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(body);
  });

  it('accepts a JSON content type with a UTF-8 charset', async () => {
    expect((await patchOnboarding(base, token, { reporting_timezone: 'UTC' }, 'application/json; charset=utf-8')).status).toBe(200);
  });

  it('415 for a body that is not JSON', async () => {
    await expectProblem(await patchOnboarding(base, token, 'reporting_timezone=UTC', 'text/plain'), 415, 'unsupported-media-type');
    await expectProblem(await patchOnboarding(base, token, 'reporting_timezone=UTC', 'application/x-www-form-urlencoded'), 415, 'unsupported-media-type');
  });

  it.each([
    ['an offset', { reporting_timezone: '+05:00' }],
    ['an unknown zone', { reporting_timezone: 'Mars/Base' }],
    ['an empty string', { reporting_timezone: '' }],
    ['a number', { reporting_timezone: 545 }],
    ['null', { reporting_timezone: null }],
    ['no field', {}],
    ['an unknown field', { reporting_timezone: 'UTC', agent_id: 'agent_other' }],
    ['an array', ['UTC']],
    ['a JSON string', 'UTC'],
  ])('422 for %s', async (_what, body) => {
    const raw = typeof body === 'string' ? JSON.stringify(body) : body;
    const detail = await expectProblem(await patchOnboarding(base, token, raw), 422, 'invalid-body');
    expect(detail.length).toBeGreaterThan(10);
  });

  it('checks the token before the body: 401 for a bad token with a bad body', async () => {
    await expectProblem(await patchOnboarding(base, 'not-a-token', { nonsense: true }), 401, 'invalid-id-token');
  });

  it('503 fast when timezone-settings does not answer, and works again when it is back', async () => {
    await timezone!.close();
    timezone = undefined;
    const started = Date.now();
    const response = await patchOnboarding(base, token, { reporting_timezone: 'Asia/Kathmandu' });
    await expectProblem(response, 503, 'settings-unavailable');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(Date.now() - started).toBeLessThan(3000);
    timezone = await startTimezoneSettings(stack.urls);
    const back = await patchOnboarding(base, token, { reporting_timezone: 'Asia/Kathmandu' });
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ reporting_timezone: 'Asia/Kathmandu' });
  });
});

describe('OpenAPI', () => {
  it('documents PATCH /agent/update-onboarding with the ID-token scheme and its statuses', async () => {
    const document = (await (await fetch(`${base}/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    const operation = document.paths['/agent/update-onboarding']?.patch;
    expect(operation).toBeDefined();
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '401', '403', '415', '422', '429', '503']);
    expect(operation.security).toEqual([{ id_token: [] }]);
    expect(document.components.securitySchemes.id_token).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
