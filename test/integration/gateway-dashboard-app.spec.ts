import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { createGatewayApp } from '../../apps/gateway/src/gateway.app.js';
import { REDIS_URL, newTestDatabase, startNats, testLogger, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * The gateway serves the dashboard at /dashboard/ (DESIGN §7, apps/dashboard/README.md): the
 * files of a build with their caching, config.json from the OIDC settings, the dashboard's
 * security headers, 404 problems for anything else; and starts without a build. Over real HTTP
 * with a stand-in build (the real one is tested in a browser: test/browser).
 */
const ISSUER = 'https://login.example.test/realms/weave';
const INDEX = '<!doctype html><html lang="en"><head><script type="module" src="/dashboard/assets/index-Ab12Cd34.js"></script></head><body></body></html>';
const SCRIPT = 'console.log("dashboard");\n';

let nats: TestNats;
let db: TestDatabase;
let build: string;
const apps: NestFastifyApplication[] = [];

async function startGateway(env: Record<string, string>): Promise<string> {
  const app = await createGatewayApp(
    loadEnv(GatewayEnv, { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, PORT: '0', LOG_LEVEL: 'error', ...env }),
    testLogger('gateway'),
  );
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
}

/**
 * A request as sent, byte for byte: fetch() normalizes dot segments (%2e%2e) and adds
 * `Cache-Control: no-cache` to conditional requests, which would hide what is tested here.
 */
function raw(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const request = httpRequest({ hostname, port, path, headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

async function problem(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  nats = await startNats();
  db = newTestDatabase();
  build = await mkdtemp(join(tmpdir(), 'weave-dashboard-build-'));
  await mkdir(join(build, 'assets'));
  await writeFile(join(build, 'index.html'), INDEX);
  await writeFile(join(build, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
  await writeFile(join(build, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(build, '.env'), 'SECRET=1');
}, 30000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await nats?.stop();
  await db?.drop();
  await rm(build, { recursive: true, force: true });
});

describe('with a build and sign-in configured', () => {
  let base: string;

  beforeAll(async () => {
    base = await startGateway({
      DASHBOARD_DIR: build,
      OIDC_ISSUER: `${ISSUER}/`,
      OIDC_AUDIENCE: 'weave-dashboard',
      OIDC_JWKS_URL: `${ISSUER}/protocol/openid-connect/certs`,
      OIDC_CLIENT_ID: 'weave-dashboard',
      OIDC_ROLE_CLAIM: 'realm_access.roles',
      DASHBOARD_CONNECT_SRC: 'https://tokens.example.test, https://revoke.example.test:8443',
    });
  }, 30000);

  it('GET /dashboard redirects to /dashboard/ (308)', async () => {
    const response = await fetch(`${base}/dashboard`, { redirect: 'manual' });
    expect(response.status).toBe(308);
    expect(response.headers.get('location')).toBe('/dashboard/');
  });

  it('GET /dashboard/ is index.html, never cached, with a CSP that allows no inline script and no framing', async () => {
    const response = await fetch(`${base}/dashboard/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toBe(INDEX);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none';script-src 'self';style-src 'self';img-src 'self';" +
        "connect-src 'self' https://login.example.test https://tokens.example.test https://revoke.example.test:8443;" +
        "base-uri 'none';form-action 'none';frame-ancestors 'none';object-src 'none'",
    );
    expect(response.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('strict-transport-security')).toBeNull();
    // Revalidation: the ETag makes a reload cheap without ever serving a stale index.html.
    const etag = response.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await raw(base, '/dashboard/', { 'if-none-match': etag! });
    expect(again.status).toBe(304);
  });

  it('serves hashed assets for a year (immutable) and other files for an hour', async () => {
    const script = await fetch(`${base}/dashboard/assets/index-Ab12Cd34.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await script.text()).toBe(SCRIPT);
    const icon = await fetch(`${base}/dashboard/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(icon.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(icon.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const head = await fetch(`${base}/dashboard/assets/index-Ab12Cd34.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('GET /dashboard/config.json is the sign-in settings from the environment, never stored', async () => {
    const response = await fetch(`${base}/dashboard/config.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ issuer: ISSUER, client_id: 'weave-dashboard', role_claim: 'realm_access.roles', api_base_url: '' });
  });

  it.each([
    ['an unknown file', '/dashboard/missing.js'],
    ['a path (the app keeps its pages in the fragment)', '/dashboard/keys'],
    ['a directory', '/dashboard/assets/'],
    ['a dotfile of the build', '/dashboard/.env'],
    ['a way out of the build', '/dashboard/%2e%2e/package.json'],
    ['a way out of the build, encoded twice', '/dashboard/assets/..%252f..%252findex.html'],
  ])('answers a 404 problem for %s', async (_what, path) => {
    const response = await raw(base, path);
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe('application/problem+json');
    const body = JSON.parse(response.body) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'https://docs.weave.example/problems/not-found', status: 404 });
    expect(String(body.detail)).toContain('the dashboard is /dashboard/');
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('sends fixed security headers on the API too (JSON, problems), and the docs page keeps its own policy', async () => {
    for (const path of ['/health/live', '/agent/reporting?time_range=all', '/no/such/route']) {
      const response = await fetch(`${base}${path}`);
      await response.arrayBuffer();
      expect({ path, csp: response.headers.get('content-security-policy') }).toEqual({
        path,
        csp: "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      });
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
    const docs = await fetch(`${base}/docs`);
    await docs.arrayBuffer();
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(docs.headers.get('content-security-policy')).not.toContain("default-src 'none'; frame-ancestors 'none'; base-uri");
  });
});

describe('without a build, and without OIDC_CLIENT_ID', () => {
  let base: string;

  beforeAll(async () => {
    base = await startGateway({ DASHBOARD_DIR: join(build, 'not-built'), OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: 'api', OIDC_JWKS_URL: `${ISSUER}/certs` });
  }, 30000);

  it('starts, is ready, and /dashboard/ answers a 404 problem that says the dashboard is not built', async () => {
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    const response = await fetch(`${base}/dashboard/`);
    expect(response.status).toBe(404);
    const body = await problem(response);
    expect(body.detail).toBe(`The dashboard is not part of this deployment: ${join(build, 'not-built', 'index.html')} is missing (npm run build builds it into dist/dashboard).`);
    expect((await fetch(`${base}/dashboard/assets/index-Ab12Cd34.js`)).status).toBe(404);
  });

  it('config.json says sign-in is not configured (issuer without client id), and the CSP still names the issuer', async () => {
    const response = await fetch(`${base}/dashboard/config.json`);
    expect(await response.json()).toEqual({ issuer: null, client_id: null, role_claim: 'role', api_base_url: '' });
    expect(response.headers.get('content-security-policy')).toContain("connect-src 'self' https://login.example.test;");
  });
});
