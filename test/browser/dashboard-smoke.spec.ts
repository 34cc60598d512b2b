import { AxeBuilder } from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DevIdentityProvider } from '../../apps/dev-identity-provider/src/index.js';
import { startDashboardServer, type DashboardServer } from './support/dashboard-server.js';

/**
 * Smoke test of the built dashboard in Debian's chromium, with the development identity
 * provider as `npm start` will run it (imported from dist/, as the launcher imports it) and a
 * static server in place of the gateway (no API yet: the full browser suite against the real
 * system comes with the gateway's /dashboard/ route).
 */
type IdpModule = typeof import('../../apps/dev-identity-provider/src/index.js');

let server: DashboardServer;
let idp: DevIdentityProvider;

/** Console errors, page errors and CSP violations seen by a page. */
function watchForErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // The API calls of a signed-in page get 404 here (no API behind the static server).
    if (message.type() === 'error' && !/status of 404/.test(message.text())) errors.push(`console: ${message.text()}`);
  });
  return errors;
}

async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

test.beforeAll(async () => {
  const { startDevIdentityProvider } = (await import(pathToFileURL(resolve('dist/apps/dev-identity-provider/src/index.js')).href)) as IdpModule;
  server = await startDashboardServer();
  idp = await startDevIdentityProvider({ port: 0, dashboardOrigin: server.origin });
  server.setConfig({ issuer: idp.issuer, client_id: idp.clientId, role_claim: 'role', api_base_url: '' });
});

test.afterAll(async () => {
  await idp?.close();
  await server?.close();
});

test('shows the signed-out page, with no inline script and no serious accessibility violation', async ({ page }, testInfo) => {
  const errors = watchForErrors(page);
  const response = await page.goto(`${server.origin}/dashboard/`);
  expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
  await expect(page.getByRole('heading', { level: 1, name: 'Weave platform dashboard' })).toBeVisible();
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'initial');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  // Every script is a file of the build (the CSP would block anything inline anyway).
  expect(await page.locator('script:not([src])').count()).toBe(0);
  expect(await seriousViolations(page)).toEqual([]);
  await page.screenshot({ path: testInfo.outputPath('signed-out.png'), fullPage: true });
  expect(errors).toEqual([]);
});

test('Sign in goes to the identity provider with Authorization Code + PKCE and comes back signed in, tokens in memory only', async ({ page }, testInfo) => {
  const errors = watchForErrors(page);
  await page.goto(`${server.origin}/dashboard/#/keys`);
  const authorize = page.waitForRequest((request) => request.url().startsWith(`${idp.issuer}/auth`));
  await page.getByRole('button', { name: 'Sign in' }).click();
  const request = new URL((await authorize).url());
  expect(Object.fromEntries(request.searchParams)).toMatchObject({
    client_id: idp.clientId,
    redirect_uri: `${server.origin}/dashboard/`,
    response_type: 'code',
    code_challenge_method: 'S256',
    scope: 'openid profile',
  });
  expect(request.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);

  // The provider's own sign-in form.
  await page.waitForURL(`${idp.issuer}/interaction/**`);
  await expect(page.getByRole('heading', { name: 'Sign in to Weave dashboard' })).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
  await page.screenshot({ path: testInfo.outputPath('identity-provider-sign-in.png'), fullPage: true });
  await page.getByLabel('Username').fill(idp.credentials.username);
  await page.getByLabel('Password').fill(idp.credentials.password);
  await page.getByRole('button', { name: 'Sign in' }).click();

  // Back on the dashboard, on the page it left, signed in; the code is gone from the address bar.
  await expect(page.getByTestId('signed-in-as')).toHaveText('Demo owner');
  expect(page.url()).toBe(`${server.origin}/dashboard/#/keys`);
  await expect(page.getByRole('heading', { level: 1, name: 'API keys' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Payouts' })).toBeVisible(); // the demo owner has the agent role

  // No token in web storage, no token in the URL: only memory holds them.
  const storage = await page.evaluate(() => {
    const web = globalThis as unknown as { localStorage: Record<string, string>; sessionStorage: Record<string, string> };
    return JSON.stringify({ local: { ...web.localStorage }, session: { ...web.sessionStorage } });
  });
  expect(storage).toBe(JSON.stringify({ local: {}, session: {} }));

  // Signing out forgets the tokens; a reload starts signed out too (nothing was kept).
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'signed-out');
  await page.reload();
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'initial');
  expect(errors).toEqual([]);
});
