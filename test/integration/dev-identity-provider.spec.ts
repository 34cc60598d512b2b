import { loadEnv } from '#libs/config';
import { DEMO_PLATFORM } from '#libs/demo';
import { startDevIdentityProvider, type DevIdentityProvider } from '../../apps/dev-identity-provider/src/index.js';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { IdTokenVerifier } from '../../apps/gateway/src/auth/id-token.verifier.js';
import { seedPlatform, startGateway, testLogger, useTestStack } from '../support/index.js';
import { patchOnboarding, startTimezoneSettings } from '../support/oidc.js';
import { authorizationCodeFlow, jwtClaims, signInForTokens, tokenRequest, type TokenResponse } from '../support/oidc-flow.js';

/**
 * The development identity provider (DESIGN §2, issue 14 item 3) as the dashboard uses it: a
 * real Authorization Code + PKCE flow over HTTP against oidc-provider, whose ID tokens the
 * gateway's own verifier accepts, with the role claim, and with which a started gateway lets the
 * demo owner change the demo platform's timezone.
 */
const DASHBOARD_ORIGIN = 'http://127.0.0.1:3000';
let idp: DevIdentityProvider;
let verifier: IdTokenVerifier;

function verifierFor(provider: DevIdentityProvider): IdTokenVerifier {
  const env = loadEnv(GatewayEnv, { ...provider.env, LOG_LEVEL: 'error' });
  return new IdTokenVerifier(env, testLogger('gateway'));
}

function owner(provider: DevIdentityProvider) {
  return {
    issuer: provider.issuer,
    clientId: provider.clientId,
    redirectUri: provider.redirectUris[0]!,
    username: provider.credentials.username,
    password: provider.credentials.password,
  };
}

beforeAll(async () => {
  idp = await startDevIdentityProvider({
    port: 0,
    dashboardOrigin: [DASHBOARD_ORIGIN, 'http://localhost:3000'],
    additionalAccounts: [{ username: 'viewer', password: 'viewer-password-for-tests', sub: 'viewer-owner' }],
  });
  verifier = verifierFor(idp);
});

afterAll(async () => {
  await idp?.close();
});

describe('startDevIdentityProvider', () => {
  it('describes itself: a loopback issuer, its JWKS, the dashboard client and redirect URIs, generated demo credentials', async () => {
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(idp.jwksUrl).toBe(`${idp.issuer}/jwks`);
    expect(idp.clientId).toBe('weave-dashboard');
    expect(idp.redirectUris).toEqual(['http://127.0.0.1:3000/dashboard/', 'http://localhost:3000/dashboard/']);
    expect(idp.signInUrl).toBe('http://127.0.0.1:3000/dashboard/');
    expect(idp.credentials.username).toBe('demo');
    expect(idp.credentials.password.length).toBeGreaterThanOrEqual(20);
    expect(idp.env).toEqual({
      OIDC_ISSUER: idp.issuer,
      OIDC_AUDIENCE: 'weave-dashboard',
      OIDC_JWKS_URL: idp.jwksUrl,
      OIDC_CLIENT_ID: 'weave-dashboard',
      OIDC_ROLE_CLAIM: 'role',
    });

    const discovery = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.issuer).toBe(idp.issuer);
    expect(discovery.jwks_uri).toBe(idp.jwksUrl);
    expect(discovery.code_challenge_methods_supported).toEqual(['S256']);
    expect(discovery.response_types_supported).toEqual(['code']);
    const jwks = (await (await fetch(idp.jwksUrl)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d'); // never the private part
  });

  it('generates a new password at each start unless one is given', async () => {
    const other = await startDevIdentityProvider({ dashboardOrigin: DASHBOARD_ORIGIN });
    const given = await startDevIdentityProvider({ dashboardOrigin: DASHBOARD_ORIGIN, owner: { password: 'chosen-password' } });
    try {
      expect(other.credentials.password).not.toBe(idp.credentials.password);
      expect(given.credentials.password).toBe('chosen-password');
    } finally {
      await other.close();
      await given.close();
    }
  });

  it('listens on loopback only', async () => {
    await expect(startDevIdentityProvider({ host: '0.0.0.0', dashboardOrigin: DASHBOARD_ORIGIN })).rejects.toThrow(/loopback/);
  });
});

describe('Authorization Code + PKCE against the development identity provider', () => {
  let tokens: TokenResponse;

  beforeAll(async () => {
    tokens = await signInForTokens(owner(idp));
  });

  it('signs the demo owner in with the printed credentials and issues an RS256 ID token for the dashboard client', () => {
    const header = JSON.parse(Buffer.from(tokens.id_token.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(header.alg).toBe('RS256');
    const claims = jwtClaims(tokens.id_token);
    expect(claims).toMatchObject({ iss: idp.issuer, aud: 'weave-dashboard', sub: DEMO_PLATFORM.ownerUid, role: 'agent', name: 'Demo owner' });
    expect(typeof claims.exp).toBe('number');
    expect(typeof claims.iat).toBe('number');
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('is accepted by the gateway verifier with OIDC_ISSUER/OIDC_AUDIENCE/OIDC_JWKS_URL pointed at it, role included', async () => {
    const result = await verifier.verify(tokens.id_token);
    expect(result).toMatchObject({ ok: true, claims: { sub: DEMO_PLATFORM.ownerUid, role: 'agent', aud: 'weave-dashboard', iss: idp.issuer } });
  });

  it('is refused by a verifier configured for another provider (same client id, other keys)', async () => {
    const other = await startDevIdentityProvider({ dashboardOrigin: DASHBOARD_ORIGIN });
    try {
      const otherVerifier = verifierFor(other);
      expect(await otherVerifier.verify(tokens.id_token)).toEqual({ ok: false, reason: 'invalid' });
    } finally {
      await other.close();
    }
  });

  it('renews by refresh token (no iframe): an ID token again, the refresh token rotated, still verified', async () => {
    const response = await tokenRequest(
      `${idp.issuer}/token`,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: idp.clientId },
      DASHBOARD_ORIGIN,
    );
    expect(response.status).toBe(200);
    // The SPA calls the token endpoint cross-origin: CORS for the dashboard's origin.
    expect(response.headers.get('access-control-allow-origin')).toBe(DASHBOARD_ORIGIN);
    const renewed = (await response.json()) as TokenResponse;
    // A fresh ID token (identical bytes when issued within the same second: RS256 is deterministic).
    expect(jwtClaims(renewed.id_token).exp as number).toBeGreaterThanOrEqual(jwtClaims(tokens.id_token).exp as number);
    expect(renewed.refresh_token).not.toBe(tokens.refresh_token);
    expect(await verifier.verify(renewed.id_token)).toMatchObject({ ok: true, claims: { sub: DEMO_PLATFORM.ownerUid, role: 'agent' } });
    // The old refresh token was rotated away.
    const reuse = await tokenRequest(`${idp.issuer}/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: idp.clientId });
    expect(reuse.status).toBe(400);
  });

  it('gives an account without a role no role claim (the dashboard then shows no payouts)', async () => {
    const viewer = await signInForTokens({ ...owner(idp), username: 'viewer', password: 'viewer-password-for-tests' });
    const result = await verifier.verify(viewer.id_token);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.claims.sub).toBe('viewer-owner');
      expect(result.claims).not.toHaveProperty('role');
    }
  });

  it('shows the form again with an error for a wrong password, and issues no code', async () => {
    const flow = await authorizationCodeFlow({ ...owner(idp), password: 'wrong' });
    expect(flow.ok).toBe(false);
    if (!flow.ok) {
      expect(flow.status).toBe(401);
      expect(flow.body).toContain('Unknown username or wrong password.');
      expect(flow.body).not.toContain(idp.credentials.password);
    }
  });

  it('refuses an authorization request without PKCE', async () => {
    const flow = await authorizationCodeFlow({ ...owner(idp), withoutPkce: true });
    expect(flow.ok).toBe(false);
    if (!flow.ok) expect(new URL(flow.location!).searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses the code without its verifier, and a redirect URI that is not registered', async () => {
    const flow = await authorizationCodeFlow(owner(idp));
    expect(flow.ok).toBe(true);
    if (!flow.ok) return;
    const noVerifier = await tokenRequest(flow.tokenEndpoint, {
      grant_type: 'authorization_code',
      code: flow.code,
      redirect_uri: idp.redirectUris[0]!,
      client_id: idp.clientId,
    });
    expect(noVerifier.status).toBe(400);
    const foreign = await authorizationCodeFlow({ ...owner(idp), redirectUri: 'http://127.0.0.1:9999/elsewhere/' });
    expect(foreign.ok).toBe(false);
    if (!foreign.ok) expect(foreign.status).toBe(400);
  });
});

describe('a started gateway pointed at the development identity provider', () => {
  const stack = useTestStack();
  let base: string;

  beforeAll(async () => {
    stack.track(await startTimezoneSettings(stack.urls));
    ({ base } = await startGateway(stack, { extra: { ...idp.env } }));
    await seedPlatform(stack, DEMO_PLATFORM.agentId, { owner: DEMO_PLATFORM.ownerUid, keys: [] });
  });

  it('lets the signed-in demo owner change the demo platform timezone with the ID token', async () => {
    const { id_token } = await signInForTokens(owner(idp));
    const response = await patchOnboarding(base, id_token, { reporting_timezone: 'Asia/Kathmandu' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ agent_id: DEMO_PLATFORM.agentId, reporting_timezone: 'Asia/Kathmandu' });
  });

  it('refuses the access token in place of the ID token (it is opaque, not a signed ID token)', async () => {
    const { access_token } = await signInForTokens(owner(idp));
    const response = await patchOnboarding(base, access_token, { reporting_timezone: 'UTC' });
    expect(response.status).toBe(401);
  });
});
