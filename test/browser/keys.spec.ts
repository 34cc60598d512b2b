import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import pg from 'pg';
import { checkPage, isFocused, ownerApi, ownerJson, signIn, tabTo, watchForErrors } from './support/dashboard.js';
import { system } from './support/system.js';

/**
 * API keys in the page against the real system: a key made there works at once with the built
 * @vendor/weave-node and is refused after it is revoked there; the whole walk works with the
 * keyboard alone; a key whose last four characters are not known yet is shown as such.
 */
type WeaveNode = typeof import('../../libs/weave-node/src/index.js');
interface KeyItem {
  key_id: string;
  name: string | null;
  mode: string;
  last4: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** The library as a platform installs it: its own build (dist/esm), made by the global setup. */
const weaveNode = (): Promise<WeaveNode> => import(pathToFileURL(join(process.cwd(), 'libs', 'weave-node', 'dist', 'esm', 'index.mjs')).href) as Promise<WeaveNode>;

async function listedKey(keyId: string): Promise<KeyItem | undefined> {
  return (await ownerJson<{ items: KeyItem[] }>(system().owner, '/agent/keys')).items.find((k) => k.key_id === keyId);
}

/** The key the page has just created: its secret, from the one place it is shown. */
async function newSecret(page: Page): Promise<string> {
  const secret = await page.getByTestId('new-key').getByRole('textbox').inputValue();
  expect(secret).toMatch(/^sk_(live|test)_[A-Za-z0-9]{40}$/);
  return secret;
}

test('a key created in the page: its secret is shown once, @vendor/weave-node works with it, and once it is revoked in the page the library gets its authentication error', async ({ page }, testInfo) => {
  const { owner, gateway } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/keys');
  await expect(page.getByTestId('keys').locator('tbody tr')).not.toHaveCount(0);
  await checkPage(page, testInfo, 'keys');

  await page.getByRole('textbox', { name: 'Name' }).fill('Browser test backend');
  await page.getByRole('radio', { name: 'Live (real traffic)' }).check();
  const created = page.waitForResponse((response) => response.url().endsWith('/agent/keys') && response.request().method() === 'POST');
  await page.getByRole('button', { name: 'Create key' }).click();
  const { key_id: keyId } = (await (await created).json()) as { key_id: string };
  await expect(page.getByRole('heading', { name: 'Your new key “Browser test backend”' })).toBeFocused();
  const secret = await newSecret(page);
  expect(secret.startsWith('sk_live_')).toBe(true);
  await expect(page.getByRole('button', { name: 'Copy key' })).toBeVisible();
  await checkPage(page, testInfo, 'keys-new-secret');

  // The list shows its last four characters only; the API never sends the secret again.
  const row = page.locator(`tr[data-key-id="${keyId}"]`);
  await expect(row).toContainText(`…${secret.slice(-4)}`);
  await expect(row).toContainText('Browser test backend');
  const list = await ownerApi(owner, '/agent/keys');
  expect(list.text).toContain(keyId);
  expect(list.text).not.toContain(secret);
  await page.getByRole('button', { name: 'I have stored it — hide it' }).click();
  await expect(page.getByTestId('new-key')).toHaveCount(0);
  expect(await page.content()).not.toContain(secret);

  // It works at once, with the platform's library.
  const lib = await weaveNode();
  const client = new lib.ServiceClient({ apiKey: secret, apiBaseUrl: gateway, maxRetries: 0, timeoutMs: 10_000 });
  const ask = (n: number) => client.getRecommendationsForWeave({ sessionId: 'sess_browser', messageId: `msg_${n}`, query: 'a lightweight tent for two' });
  const result = await ask(1);
  expect(typeof result.found).toBe('boolean');

  // Revoked in the page, after confirming.
  await row.getByRole('button', { name: `Revoke Browser test backend (…${secret.slice(-4)})` }).click();
  const dialog = page.getByRole('dialog', { name: `Revoke Browser test backend (…${secret.slice(-4)})?` });
  await expect(dialog).toBeVisible();
  await checkPage(page, testInfo, 'keys-revoke-dialog');
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByText(`Revoked Browser test backend (…${secret.slice(-4)}). It is refused everywhere within a second.`)).toBeVisible();
  await expect(row).toHaveAttribute('data-revoked', 'true');
  await expect(row.getByRole('button', { name: /^Revoke/ })).toHaveCount(0);
  await checkPage(page, testInfo, 'keys-revoked');

  // The library now gets its authentication error (DESIGN §7: within a second).
  const refusedAt = Date.now();
  await expect(async () => {
    const error = await ask(2).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(lib.ServiceAuthenticationError);
    expect((error as InstanceType<WeaveNode['ServiceAuthenticationError']>).status).toBe(401);
  }).toPass({ timeout: 1500, intervals: [100] });
  expect(Date.now() - refusedAt).toBeLessThan(1500);
  expect((await listedKey(keyId))?.revoked_at).not.toBeNull();
  expect(errors).toEqual([]);
});

test('with the keyboard alone: create a key, hide its secret, cancel a revoke with Escape, then revoke it', async ({ page }) => {
  const { owner } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/keys');
  // From here on the keyboard only: Tab, Shift+Tab, typing, Enter, Space, Escape, arrows.
  await expect(page.getByRole('heading', { level: 1, name: 'API keys' })).toBeFocused();
  await tabTo(page, page.getByRole('textbox', { name: 'Name' }));
  await page.keyboard.type('Keyboard key');
  await tabTo(page, page.getByRole('radio', { name: 'Test (test traffic)' }));
  await page.keyboard.press('ArrowDown');
  await expect(page.getByRole('radio', { name: 'Live (real traffic)' })).toBeChecked();
  await page.keyboard.press('ArrowUp');
  await expect(page.getByRole('radio', { name: 'Test (test traffic)' })).toBeChecked();
  await tabTo(page, page.getByRole('button', { name: 'Create key' }));
  await page.keyboard.press('Enter');

  // The secret is shown, the focus is on it; hiding it returns the focus to the form.
  await expect(page.getByRole('heading', { name: 'Your new key “Keyboard key”' })).toBeFocused();
  const secret = await newSecret(page);
  expect(secret.startsWith('sk_test_')).toBe(true);
  await tabTo(page, page.getByRole('textbox', { name: 'API key (test)' }));
  await expect(page.getByRole('textbox', { name: 'API key (test)' })).toHaveJSProperty('selectionEnd', secret.length);
  await tabTo(page, page.getByRole('button', { name: 'I have stored it — hide it' }));
  await page.keyboard.press('Space');
  await expect(page.getByTestId('new-key')).toHaveCount(0);
  await expect(page.locator('#create-key-heading')).toBeFocused();

  // Revoke: Escape cancels and the focus goes back to the button; Enter, Tab, Enter revokes.
  const revoke = page.getByRole('button', { name: `Revoke Keyboard key (…${secret.slice(-4)})` });
  await tabTo(page, revoke);
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: `Revoke Keyboard key (…${secret.slice(-4)})?` });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  expect(await isFocused(revoke)).toBe(true);
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Tab');
  await expect(dialog.getByRole('button', { name: 'Revoke key' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expect(page.getByText(`Revoked Keyboard key (…${secret.slice(-4)}).`, { exact: false })).toBeVisible();
  await expect(page.locator('#list-heading')).toBeFocused();

  const keyId = await page.locator('tr', { hasText: 'Keyboard key' }).getAttribute('data-key-id');
  const key = await listedKey(keyId!);
  expect(key).toMatchObject({ name: 'Keyboard key', mode: 'test', last4: secret.slice(-4) });
  expect(key?.revoked_at).not.toBeNull();
  expect(errors).toEqual([]);
});

test('a key made before last4 was kept shows a dash, not "null", until its next use fills it in', async ({ page }, testInfo) => {
  const { owner, demo, databaseUrl, gateway } = system();
  const errors = watchForErrors(page);
  const { key_id: keyId, api_key: secret } = demo.keys.test;
  // As the owner-API migration left the keys made before it (DESIGN §7: last4 filled at next use).
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  try {
    await sql.query('UPDATE identity.api_key SET last4 = NULL WHERE key_id = $1', [keyId]);
  } finally {
    await sql.end();
  }
  await signIn(page, owner, '#/keys');
  const row = page.locator(`tr[data-key-id="${keyId}"]`);
  await expect(row.getByTestId('last4-unknown')).toBeVisible();
  await expect(row).toContainText('—');
  await expect(row).not.toContainText('null');
  await expect(row).toContainText('Unnamed (made by operations)');
  await checkPage(page, testInfo, 'keys-last4-unknown');

  // One use of the key, and the next look at the list shows its last four characters.
  const use = await fetch(`${gateway}/agent/reporting?time_range=all`, { headers: { authorization: `Bearer ${secret}` } });
  expect(use.status).toBe(200);
  await expect(async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Reporting', exact: true }).click();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
    await expect(row.locator('code')).toHaveText(`…${secret.slice(-4)}`, { timeout: 1000 });
  }).toPass({ timeout: 10_000 });
  expect((await listedKey(keyId))?.last_used_at).not.toBeNull();
  expect(errors).toEqual([]);
});
