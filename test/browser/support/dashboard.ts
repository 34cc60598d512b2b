import { AxeBuilder } from '@axe-core/playwright';
import { expect, type Locator, type Page, type TestInfo } from '@playwright/test';
import { signInForTokens } from '../../support/oidc-flow.js';
import { system, type Account } from './system.js';

/** The dashboard's own URL (also its OAuth redirect URI). */
export const dashboardUrl = (hash = '') => `${system().gateway}/dashboard/${hash}`;

/**
 * Console errors, page errors and Content-Security-Policy violations (Chromium reports those as
 * console errors: "Refused to …") seen by a page. `expected` lets a test name the failed
 * requests it provokes on purpose (a 401, a 503).
 */
export function watchForErrors(page: Page, expected: RegExp[] = []): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !expected.some((pattern) => pattern.test(message.text()))) errors.push(`console: ${message.text()}`);
  });
  return errors;
}

/** axe-core on the page as it is now: the serious and critical violations (none expected). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Every page of the dashboard: axe finds no serious or critical violation, and a full-page screenshot goes to the test's output. */
export async function checkPage(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}

/**
 * Signs in through the dashboard's button and the development identity provider's form, as a
 * person does, and waits for the page `hash` signed in. Returns the provider's token response
 * (read off the network), so that a test can look for the tokens where they must not be.
 */
export async function signIn(page: Page, account: Account, hash = '#/reporting'): Promise<{ id_token: string; access_token: string; refresh_token?: string }> {
  const { issuer } = system();
  await page.goto(dashboardUrl(hash));
  await expect(page.getByTestId('signed-out')).toBeVisible();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${issuer}/interaction/**`);
  await page.getByLabel('Username').fill(account.username);
  await page.getByLabel('Password').fill(account.password);
  const tokens = page.waitForResponse((response) => response.url() === `${issuer}/token` && response.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const body = (await (await tokens).json()) as { id_token: string; access_token: string; refresh_token?: string };
  await expect(page.getByTestId('signed-in-as')).toBeVisible();
  return body;
}

const tokenCache = new Map<string, Promise<string>>();

/** An ID token of `account` for the test's own API calls (Authorization Code + PKCE over HTTP, test/support/oidc-flow.ts). */
export function idToken(account: Account): Promise<string> {
  let token = tokenCache.get(account.username);
  if (!token) {
    const { issuer, clientId, gateway } = system();
    token = signInForTokens({ issuer, clientId, redirectUri: `${gateway}/dashboard/`, username: account.username, password: account.password }).then((t) => t.id_token);
    tokenCache.set(account.username, token);
  }
  return token;
}

/** GET on the owner API with `account`'s ID token: status, headers and body text. */
export async function ownerApi(account: Account, path: string): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${system().gateway}${path}`, { headers: { authorization: `Bearer ${await idToken(account)}` } });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

export async function ownerJson<T>(account: Account, path: string): Promise<T> {
  const { status, text } = await ownerApi(account, path);
  expect({ path, status }).toEqual({ path, status: 200 });
  return JSON.parse(text) as T;
}

/** Is the element the focused one? */
export const isFocused = (locator: Locator) => locator.evaluate((element) => element === document.activeElement);

/**
 * Presses Tab until `target` has the focus (at most `max` times): the keyboard alone reaches it.
 * Shift+Tab with `backwards`.
 */
export async function tabTo(page: Page, target: Locator, { max = 40, backwards = false } = {}): Promise<number> {
  for (let presses = 0; presses <= max; presses++) {
    if (await isFocused(target)) return presses;
    await page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`${target} was not reached with ${max} presses of ${backwards ? 'Shift+Tab' : 'Tab'}`);
}

/** The tokens must never be in web storage: the app keeps them in memory. */
export async function webStorage(page: Page): Promise<{ local: Record<string, string>; session: Record<string, string> }> {
  return page.evaluate(() => ({ local: { ...window.localStorage }, session: { ...window.sessionStorage } }));
}
