import { expect, test, type Request } from '@playwright/test';
import { checkPage, dashboardUrl, signIn, watchForErrors, webStorage } from './support/dashboard.js';
import { system } from './support/system.js';

/**
 * Signing in to the dashboard at /dashboard/ of the gateway that `npm start` runs, against the
 * development identity provider the launcher started (DESIGN §2, §7): the headers the gateway
 * sends, Authorization Code with PKCE, tokens in memory only, a 401 ending the session.
 */

test('npm start printed the sign-in URL and the demo credentials, and created the demo platform', () => {
  const { gateway, issuer, owner, launcherOutput } = system();
  const lines = launcherOutput.split('\n');
  expect(lines).toContain(`development identity provider at ${issuer} (no OIDC settings given); demo platform agent_demo of owner demo-owner: created`);
  expect(lines).toContain(`ready: API ${gateway}  docs ${gateway}/docs  metrics ${gateway}/metrics  dashboard ${gateway}/dashboard/`);
  expect(lines).toContain(
    `sign in at ${gateway}/dashboard/ as ${owner.username} / ${owner.password} (development identity provider; npm run demo fills the demo platform with a week of activity)`,
  );
  expect(launcherOutput).not.toContain('Unsupported runtime');
});

test('the signed-out page: its headers (a CSP without inline scripts, no framing, no referrer), its files, no serious accessibility violation', async ({ page }, testInfo) => {
  const { issuer, gateway } = system();
  const errors = watchForErrors(page);
  const response = await page.goto(dashboardUrl());
  const headers = response!.headers();
  const csp = headers['content-security-policy']!;
  const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
  expect(directives['script-src']).toEqual(["'self'"]);
  expect(directives['style-src']).toEqual(["'self'"]);
  expect(directives['default-src']).toEqual(["'none'"]);
  expect(directives['frame-ancestors']).toEqual(["'none'"]);
  expect(directives['connect-src']).toEqual(["'self'", issuer]);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['cache-control']).toBe('no-cache');

  await expect(page.getByRole('heading', { level: 1, name: 'Weave platform dashboard' })).toBeVisible();
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'initial');
  // Every script is a file of the build, cached for a year under its hashed name.
  expect(await page.locator('script:not([src])').count()).toBe(0);
  const script = await page.locator('script[src]').first().getAttribute('src');
  const asset = await page.request.get(`${gateway}${script}`);
  expect(asset.status()).toBe(200);
  expect(asset.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
  const config = await page.request.get(dashboardUrl('config.json'));
  expect(config.headers()['cache-control']).toBe('no-store');
  expect(await config.json()).toEqual({ issuer, client_id: 'weave-dashboard', role_claim: 'role', api_base_url: '' });

  await checkPage(page, testInfo, 'signed-out');
  expect(errors).toEqual([]);
});

test('sign-in is Authorization Code + PKCE at the identity provider; the tokens never reach a URL, web storage or a cookie', async ({ page }, testInfo) => {
  const { issuer, clientId, owner } = system();
  const errors = watchForErrors(page);
  const requests: Request[] = [];
  page.on('request', (request) => requests.push(request));

  await page.goto(dashboardUrl('#/keys'));
  const authorize = page.waitForRequest((request) => request.url().startsWith(`${issuer}/auth`));
  await page.getByRole('button', { name: 'Sign in' }).click();
  const parameters = Object.fromEntries(new URL((await authorize).url()).searchParams);
  expect(parameters).toMatchObject({
    client_id: clientId,
    redirect_uri: dashboardUrl(),
    response_type: 'code',
    code_challenge_method: 'S256',
    scope: 'openid profile',
  });
  expect(parameters.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

  // The provider's own sign-in form.
  await page.waitForURL(`${issuer}/interaction/**`);
  await expect(page.getByRole('heading', { name: 'Sign in to Weave dashboard' })).toBeVisible();
  await checkPage(page, testInfo, 'identity-provider-sign-in');
  await page.getByLabel('Username').fill(owner.username);
  await page.getByLabel('Password').fill(owner.password);
  const tokenResponse = page.waitForResponse((response) => response.url() === `${issuer}/token`);
  const keysRequest = page.waitForRequest((request) => request.url().endsWith('/agent/keys'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  const tokens = (await (await tokenResponse).json()) as Record<string, string>;
  expect(tokens.id_token).toMatch(/^ey/);
  expect(tokens.refresh_token).toBeTruthy();

  // Back on the page it left, signed in; the code and state are gone from the address bar.
  await expect(page.getByTestId('signed-in-as')).toHaveText('Demo owner');
  await expect(page.getByRole('heading', { level: 1, name: 'API keys' })).toBeVisible();
  expect(page.url()).toBe(dashboardUrl('#/keys'));
  // The API calls carry the ID token in the Authorization header (DESIGN §7).
  expect((await keysRequest).headers().authorization).toBe(`Bearer ${tokens.id_token}`);

  // Visit every page once more, then look for the tokens where they must never be.
  for (const [link, heading] of [['Reporting', 'Reporting'], ['Reporting timezone', 'Reporting timezone'], ['Payouts', 'Payouts']]) {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link, exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name: heading })).toBeVisible();
  }
  const secrets = [tokens.id_token, tokens.access_token, tokens.refresh_token].filter(Boolean);
  const urls = requests.map((request) => request.url());
  expect(urls.length).toBeGreaterThan(10);
  for (const secret of secrets) expect(urls.filter((url) => url.includes(secret!))).toEqual([]);
  expect(await webStorage(page)).toEqual({ local: {}, session: {} });
  expect(await page.evaluate(() => document.cookie)).toBe('');
  expect(page.url()).not.toMatch(/code=|state=|token/);

  // An unknown page says so.
  await page.goto(dashboardUrl('#/no-such-page'));
  await expect(page.getByText('There is no page at /no-such-page.')).toBeVisible();
  await checkPage(page, testInfo, 'not-found');

  // Signing out forgets the tokens; a reload starts signed out too (nothing was kept).
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'signed-out');
  await page.reload();
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'initial');
  expect(errors).toEqual([]);
});

test('a 401 from the API signs out at once, saying why', async ({ page }, testInfo) => {
  const errors = watchForErrors(page, [/status of 401/]);
  await signIn(page, system().owner, '#/reporting');
  // The gateway itself refuses: the next keys request reaches it with a token it cannot verify.
  await page.route('**/agent/keys', (route) => route.continue({ headers: { ...route.request().headers(), authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.bm90LXNpZ25lZA' } }));
  const refused = page.waitForResponse((response) => response.url().endsWith('/agent/keys'));
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
  expect((await refused).status()).toBe(401);
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'refused');
  await expect(page.getByRole('alert')).toHaveText('The API no longer accepts your sign-in (it expired or was revoked). Sign in again to continue.');
  await expect(page.getByTestId('signed-in-as')).toHaveCount(0);
  await checkPage(page, testInfo, 'signed-out-refused');
  expect(errors).toEqual([]);
});

test('when the session cannot be renewed, it ends at the ID token\'s expiry, saying so', async ({ page }) => {
  const { issuer, owner } = system();
  const errors = watchForErrors(page, [/Failed to load resource/, /ERR_FAILED/, /renew/i]);
  // The page's clock is Playwright's from the start (it runs on by itself), so the hour of the
  // development provider's tokens can be skipped below.
  await page.clock.install();
  const tokens = await signIn(page, owner, '#/reporting');
  expect(tokens.refresh_token).toBeTruthy();
  // Renewal (a refresh-token grant a minute before expiry) cannot reach the provider.
  const renewals: string[] = [];
  await page.route(`${issuer}/token`, (route) => {
    renewals.push(route.request().method());
    return route.abort();
  });
  await page.clock.fastForward('59:10'); // past the renewal, a minute before expiry
  await expect.poll(() => renewals).toContain('POST');
  await expect(page.getByTestId('signed-in-as')).toBeVisible(); // still signed in until the token expires
  await page.clock.fastForward('01:00');
  await expect(page.getByTestId('signed-out')).toHaveAttribute('data-reason', 'expired');
  await expect(page.getByRole('alert')).toHaveText('Your session expired. Sign in again to continue.');
  await expect(page.getByTestId('signed-in-as')).toHaveCount(0);
  expect(errors).toEqual([]);
});
