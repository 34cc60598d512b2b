import { identityOf, seedPlatform, startGateway, startIdentityProvider, useTestStack } from '../support/index.js';
import {
  generateTestKey,
  startTimezoneSettings,
  hs256WithPublicKey,
  patchOnboarding,
  signIdToken,
  startJwksServer,
  unsignedIdToken,
  writeJwksFile,
  type JwksServer,
  type TestKey,
} from '../support/oidc.js';

/**
 * ID-token authentication of the gateway against a real JWKS HTTP server and real keys:
 * every refusal of the list, key rotation, an API key in place of a token, and the
 * platform-owner rule (sub = owner_uid of an active platform).
 */
const stack = useTestStack();
let jwks: JwksServer;
let base: string;
let rsa: TestKey;
let ec: TestKey;
let apiKey: string;
const BODY = { reporting_timezone: 'Asia/Kathmandu' };
const now = () => Math.floor(Date.now() / 1000);

async function expect401(response: Response, detail?: RegExp): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  const problem = (await response.json()) as { type: string; detail: string };
  expect(problem.type).toMatch(/invalid-id-token$/);
  if (detail) expect(problem.detail).toMatch(detail);
}

beforeAll(async () => {
  ({ jwks, keys: [rsa, ec] } = await startIdentityProvider(stack, [await generateTestKey('RS256', 'kid_rsa'), await generateTestKey('ES256', 'kid_ec')]));
  stack.track(await startTimezoneSettings(stack.urls));
  ({ base } = await startGateway(stack, { jwksUrl: jwks.url }));
  ({ key: apiKey } = await seedPlatform(stack, 'agent_owned', { owner: 'uid_owner' }));
  await seedPlatform(stack, 'agent_suspended', { owner: 'uid_suspended', keys: [] });
  await (await identityOf(stack)).setStatus('agent_suspended', 'suspended');
  await seedPlatform(stack, 'agent_unowned', { keys: [] });
});

describe('ID tokens on PATCH /agent/update-onboarding', () => {
  it('accepts a valid RS256 token of the owner and a valid ES256 one', async () => {
    const response = await patchOnboarding(base, await signIdToken(rsa), BODY);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ agent_id: 'agent_owned', reporting_timezone: 'Asia/Kathmandu' });
    expect((await patchOnboarding(base, await signIdToken(ec), BODY)).status).toBe(200);
  });

  it('keeps the JWKS it fetched (Cache-Control max-age): known kids cause no refetch', async () => {
    const before = jwks.fetches;
    for (let i = 0; i < 3; i++) expect((await patchOnboarding(base, await signIdToken(rsa), BODY)).status).toBe(200);
    expect(jwks.fetches).toBe(before);
  });

  it('allows at most 60 s of clock skew', async () => {
    expect((await patchOnboarding(base, await signIdToken(rsa, { exp: now() - 30 }), BODY)).status).toBe(200);
    expect((await patchOnboarding(base, await signIdToken(rsa, { nbf: now() + 30, iat: now() + 30 }), BODY)).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { iat: now() - 7200, exp: now() - 120 }), BODY), /expired/);
  });

  it('refuses a token that is not yet valid (nbf) or issued in the future (iat)', async () => {
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { nbf: now() + 600 }), BODY));
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { iat: now() + 600 }), BODY));
  });

  it('refuses a wrong issuer and a wrong audience', async () => {
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { iss: 'https://evil.example/' }), BODY));
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { aud: 'another-app' }), BODY));
  });

  it('refuses a token signed by another key under a known kid', async () => {
    const impostor = await generateTestKey('RS256', rsa.kid);
    await expect401(await patchOnboarding(base, await signIdToken(impostor), BODY));
  });

  it('refuses alg none', async () => {
    await expect401(await patchOnboarding(base, unsignedIdToken(), BODY));
  });

  it('refuses HS256 signed with the public key as the secret', async () => {
    await expect401(await patchOnboarding(base, await hs256WithPublicKey(rsa), BODY));
  });

  it('refuses a token without sub, and missing exp', async () => {
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { sub: undefined }), BODY));
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { exp: undefined }), BODY));
  });

  it('refuses a sub that owns no platform (401) and the owner of a suspended platform (403)', async () => {
    await expect401(await patchOnboarding(base, await signIdToken(rsa, { sub: 'uid_stranger' }), BODY), /does not own a platform/);
    const suspended = await patchOnboarding(base, await signIdToken(rsa, { sub: 'uid_suspended' }), BODY);
    expect(suspended.status).toBe(403);
    expect(((await suspended.json()) as { type: string }).type).toMatch(/account-unavailable$/);
  });

  it('refuses an API key in place of the token, and no or a non-Bearer header', async () => {
    await expect401(await patchOnboarding(base, apiKey, BODY), /API key is not accepted/);
    await expect401(await patchOnboarding(base, 'sk_test_short', BODY), /API key is not accepted/);
    await expect401(await patchOnboarding(base, undefined, BODY));
    const basic = await fetch(`${base}/agent/update-onboarding`, {
      method: 'PATCH',
      headers: { authorization: `Basic ${await signIdToken(rsa)}`, 'content-type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    await expect401(basic);
  });

  it('refuses an ID token where the API key is required', async () => {
    const response = await fetch(`${base}/agent/reporting`, { headers: { authorization: `Bearer ${await signIdToken(rsa)}` } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { type: string }).type).toMatch(/invalid-api-key$/);
  });

  it('accepts a token of a rotated-in key once the JWKS is refetched for the unknown kid', async () => {
    const rotated = await generateTestKey('RS256', 'kid_rotated');
    const token = await signIdToken(rotated);
    // Not published yet: the refetch finds nothing, the token is refused.
    await new Promise((r) => setTimeout(r, 250));
    await expect401(await patchOnboarding(base, token, BODY));
    jwks.setKeys([rotated, ec]);
    await new Promise((r) => setTimeout(r, 250)); // the refetch cooldown of the test gateway (200 ms)
    const before = jwks.fetches;
    expect((await patchOnboarding(base, token, BODY)).status).toBe(200);
    expect(jwks.fetches).toBe(before + 1);
    // The retired key is gone after the refetch; the new one keeps working without fetches.
    await expect401(await patchOnboarding(base, await signIdToken(rsa), BODY));
    expect((await patchOnboarding(base, token, BODY)).status).toBe(200);
  });

  it('refetches for unknown kids at most once per cooldown', async () => {
    await new Promise((r) => setTimeout(r, 250));
    const before = jwks.fetches;
    const stranger = await generateTestKey('ES256', 'kid_garbage');
    for (let i = 0; i < 5; i++) await expect401(await patchOnboarding(base, await signIdToken(stranger), BODY));
    expect(jwks.fetches).toBe(before + 1);
  });
});

describe('ID-token configuration', () => {
  it('refuses every token when OIDC is not configured', async () => {
    const bare = await startGateway(stack, { oidc: false });
    await expect401(await patchOnboarding(bare.base, await signIdToken(ec), BODY), /not configured/);
  });

  it('reads the keys from a local JWKS file when OIDC_JWKS_URL is a path', async () => {
    const path = await writeJwksFile([ec]);
    const filed = await startGateway(stack, { jwksUrl: path });
    expect((await patchOnboarding(filed.base, await signIdToken(ec), BODY)).status).toBe(200);
    await expect401(await patchOnboarding(filed.base, await signIdToken(rsa), BODY));
  });

  it('asks an identity provider that is down at most once per cooldown, also before any key was ever loaded', async () => {
    const cooldownMs = 2000;
    const provider = stack.track(await startJwksServer([ec]));
    provider.setAvailable(false);
    const gw = await startGateway(stack, { jwksUrl: provider.url, extra: { OIDC_JWKS_COOLDOWN_MS: String(cooldownMs) } });
    const token = await signIdToken(ec);
    const started = Date.now();
    // 10 at once, then 10 one after the other: every one answered 503, the provider asked once.
    const together = await Promise.all(Array.from({ length: 10 }, () => patchOnboarding(gw.base, token, BODY)));
    const statuses = together.map((r) => r.status);
    for (let i = 0; i < 10; i++) statuses.push((await patchOnboarding(gw.base, token, BODY)).status);
    const elapsed = Date.now() - started;
    expect(statuses).toEqual(Array(20).fill(503));
    expect(provider.fetches).toBeGreaterThanOrEqual(1);
    // One fetch per cooldown that has begun (1 unless this machine took over 2 s for 20 requests).
    expect(provider.fetches).toBeLessThanOrEqual(1 + Math.floor(elapsed / cooldownMs));

    // The provider is back: the first request after the cooldown fetches once, and is served.
    provider.setAvailable(true);
    const before = provider.fetches;
    await new Promise((resolve) => setTimeout(resolve, cooldownMs + 100));
    expect((await patchOnboarding(gw.base, token, BODY)).status).toBe(200);
    expect((await patchOnboarding(gw.base, token, BODY)).status).toBe(200);
    expect(provider.fetches).toBe(before + 1);
  });

  it('answers 503 when the JWKS cannot be fetched at all', async () => {
    const down = await startGateway(stack, { jwksUrl: 'http://127.0.0.1:1/jwks.json' });
    const response = await patchOnboarding(down.base, await signIdToken(ec), BODY);
    expect(response.status).toBe(503);
  });
});
