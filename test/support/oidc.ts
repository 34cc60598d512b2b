import { createServer, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { loadEnv } from '#libs/config';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { createGatewayApp } from '../../apps/gateway/src/gateway.app.js';
import { TimezoneSettingsEnv } from '../../apps/timezone-settings/src/config/timezone-settings.env.js';
import { createTimezoneSettingsApp } from '../../apps/timezone-settings/src/timezone-settings.app.js';
import { startInProcess, type ServiceSettings, type ServiceUnderTest } from './apps.js';
import { testLogger } from './logger.js';
import { REDIS_URL } from './servers.js';

/**
 * A test identity provider: key pairs generated here, a JWKS served over real HTTP, and ID
 * tokens signed with them. Nothing is mocked in the gateway; it fetches and verifies as in
 * production.
 */
export const TEST_ISSUER = 'https://idp.test.example/';
export const TEST_AUDIENCE = 'weave-dashboard';

export interface TestKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export async function generateTestKey(alg: 'RS256' | 'ES256', kid = `kid_${randomBytes(4).toString('hex')}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, publicJwk };
}

export interface JwksServer {
  url: string;
  /** GET requests of the JWKS so far (answered or not). */
  fetches: number;
  setKeys(keys: TestKey[]): void;
  /** false: the JWKS answers 503, as an identity provider that is down. */
  setAvailable(available: boolean): void;
  close(): Promise<void>;
}

/** Serves `{keys}` at /jwks.json with a Cache-Control max-age (one hour unless told). */
export async function startJwksServer(keys: TestKey[], cacheControl = 'public, max-age=3600'): Promise<JwksServer> {
  let current = keys;
  let available = true;
  const state = { fetches: 0 };
  const server: Server = createServer((request, response) => {
    if (request.url !== '/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    state.fetches++;
    if (!available) {
      response.writeHead(503).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': cacheControl });
    response.end(JSON.stringify({ keys: current.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    get fetches() {
      return state.fetches;
    },
    setKeys: (next) => (current = next),
    setAvailable: (next) => (available = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Writes a JWKS file (the OIDC_JWKS_URL-as-path variant). */
export async function writeJwksFile(keys: TestKey[]): Promise<string> {
  const path = join(tmpdir(), `weave-jwks-${randomBytes(4).toString('hex')}.json`);
  await writeFile(path, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  return path;
}

const now = () => Math.floor(Date.now() / 1000);

/** A valid ID token for `sub` unless the overrides say otherwise (undefined removes a claim). */
export async function signIdToken(
  key: TestKey,
  claims: Record<string, unknown> = {},
  header: { kid?: string; alg?: string } = {},
): Promise<string> {
  const payload: Record<string, unknown> = { iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: 'uid_owner', iat: now(), exp: now() + 3600, ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload as JWTPayload).setProtectedHeader({ alg: header.alg ?? key.alg, kid: header.kid ?? key.kid, typ: 'JWT' }).sign(key.privateKey);
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** `alg: none`: an unsecured JWT with an empty signature. */
export function unsignedIdToken(claims: Record<string, unknown> = {}): string {
  const payload = { iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: 'uid_owner', iat: now(), exp: now() + 3600, ...claims };
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
}

/** The classic key-confusion attack: HS256 keyed with the provider's public key (PEM). */
export async function hs256WithPublicKey(key: TestKey, claims: Record<string, unknown> = {}): Promise<string> {
  const secret = new TextEncoder().encode(await exportSPKI(key.publicKey));
  const payload = { iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: 'uid_owner', iat: now(), exp: now() + 3600, ...claims };
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' }).sign(secret);
}

/** Starts timezone-settings in this process, as main.ts does, on a free port. */
export function startTimezoneSettings(settings: ServiceSettings): Promise<ServiceUnderTest<TimezoneSettingsEnv>> {
  return startInProcess('timezone-settings', TimezoneSettingsEnv, 'TIMEZONE_HTTP_PORT', createTimezoneSettingsApp, settings);
}

/** Starts the gateway with the test identity provider (or with `oidc: false`, none). */
export async function startGatewayWithOidc(settings: {
  natsUrl: string;
  databaseUrl: string;
  jwksUrl?: string;
  oidc?: boolean;
  extra?: Record<string, string>;
  /** The gateway's logger (default: warnings and errors to stdout), e.g. one that captures lines. */
  logger?: Logger;
  /** false: no TRACKING_SIGNING_SECRET, as a first start that generates one (default: a test secret). */
  trackingSecret?: false;
}): Promise<{ app: NestFastifyApplication; base: string }> {
  const oidc =
    settings.oidc === false
      ? {}
      : { OIDC_ISSUER: TEST_ISSUER, OIDC_AUDIENCE: TEST_AUDIENCE, OIDC_JWKS_URL: settings.jwksUrl ?? '', OIDC_JWKS_COOLDOWN_MS: '200' };
  const env = loadEnv(GatewayEnv, {
    NATS_URL: settings.natsUrl,
    DATABASE_URL: settings.databaseUrl,
    REDIS_URL,
    LOG_LEVEL: 'error',
    TIMEZONE_REQUEST_TIMEOUT_MS: '1000',
    // A secret of the test's own: without one the gateway generates one and warns at every start.
    ...(settings.trackingSecret === false ? {} : { TRACKING_SIGNING_SECRET: 'test-support-tracking-signing-secret' }),
    ...oidc,
    ...settings.extra,
  });
  const app = await createGatewayApp(env, settings.logger ?? testLogger('gateway'));
  await app.listen(0, '127.0.0.1');
  return { app, base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}

/** PATCH /agent/update-onboarding with a bearer credential and a JSON body. */
export function patchOnboarding(base: string, credential: string | undefined, body: unknown, contentType = 'application/json'): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (credential !== undefined) headers.authorization = `Bearer ${credential}`;
  return fetch(`${base}/agent/update-onboarding`, { method: 'PATCH', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}
