import { readFile } from 'node:fs/promises';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { checkPage, isFocused, ownerApi, ownerJson, signIn, watchForErrors } from './support/dashboard.js';
import { system } from './support/system.js';

/**
 * "Top ads" and "Top products" (DESIGN §9) against the real system after `npm run demo`: what
 * each table shows is what GET /agent/dashboard/reporting/breakdown answers for the chosen range,
 * traffic and sort (read from the table's data attribute and its cells), re-sorted with the
 * keyboard alone; the CSV download is the API's CSV; axe finds nothing serious.
 */
interface Row extends Record<string, unknown> {
  id: string | null;
}
interface Breakdown extends Record<string, unknown> {
  processed_through: string;
  rows: Row[];
  other: Record<string, number>;
}

const grouped = (value: unknown) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** The table of `by` equals the API's breakdown for this query at the same publication (refreshing when one fell between). */
async function expectTableEqualsApi(page: Page, by: 'ad' | 'product', query: string): Promise<Breakdown> {
  const table = page.getByTestId(`breakdown-${by}`).locator('table');
  let api: Breakdown | undefined;
  await expect(async () => {
    const shown = JSON.parse((await table.getAttribute('data-breakdown', { timeout: 2000 }))!) as Breakdown;
    api = await ownerJson<Breakdown>(system().owner, `/agent/dashboard/reporting/breakdown?by=${by}&limit=10&${query}`);
    if (api.processed_through !== shown.processed_through) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      throw new Error(`published meanwhile: page ${shown.processed_through}, API ${api.processed_through}`);
    }
    expect(shown).toEqual(api);
  }).toPass({ timeout: 30_000, intervals: [200, 500, 1000] });
  const rows = table.locator('tbody tr');
  await expect(rows).toHaveCount(api!.rows.length + 1);
  for (const [index, row] of api!.rows.entries()) {
    await expect(rows.nth(index)).toHaveAttribute('data-id', row.id ?? '');
    await expect(rows.nth(index).locator('th')).toHaveText(row.id ?? 'Unattributed');
    await expect(rows.nth(index).locator('td[data-figure="exposures"]')).toHaveText(grouped(row.exposures));
    await expect(rows.nth(index).locator('td[data-figure="clicks"]')).toHaveText(grouped(row.clicks));
  }
  await expect(rows.last().locator('td[data-figure="exposures"]')).toHaveText(grouped(api!.other.exposures));
  return api!;
}

async function readyTable(page: Page, by: 'ad' | 'product'): Promise<Locator> {
  const box = page.getByTestId(`breakdown-${by}`);
  // A scope asked for the first time is prepared first (202): "Check now" asks again at once.
  await expect(async () => {
    if ((await box.getAttribute('data-state')) === 'preparing') await box.getByRole('button', { name: 'Check now' }).click();
    await expect(box.locator('table')).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 30_000, intervals: [500, 1000] });
  return box;
}

test('the top ads and products are what the breakdown API answers, sortable with the keyboard, with the CSV of the API', async ({ page }, testInfo) => {
  // Three new scopes are prepared on the way (202 first), and axe runs on three states of a long page.
  test.setTimeout(180_000);
  const { owner } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/reporting?traffic=live&range=7d&granularity=day');
  // The page of its own, reached from the navigation with the reporting page's range and traffic.
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Top ads and products' }).click();
  await expect(page).toHaveURL(/#\/reporting\/top\?traffic=live&range=7d$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Top ads and products' })).toBeVisible();
  const ads = await readyTable(page, 'ad');
  await readyTable(page, 'product');

  const byEarnings = await expectTableEqualsApi(page, 'ad', 'time_range=7d&traffic=live&sort=earnings_micros');
  expect(byEarnings.rows.length).toBeGreaterThan(1);
  expect(byEarnings.rows.some((row) => typeof row.id === 'string' && row.id.startsWith('ad_'))).toBe(true);
  await expect(ads.locator('th[aria-sort="descending"]')).toContainText('Earnings');
  await expectTableEqualsApi(page, 'product', 'time_range=7d&traffic=live&sort=earnings_micros');
  await checkPage(page, testInfo, 'breakdown-live');

  // Sorting by clicks with the keyboard alone: the focused header button, Enter.
  const clicks = ads.getByRole('button', { name: /^Clicks\s*, sort by clicks/ });
  await clicks.focus();
  expect(await isFocused(clicks)).toBe(true);
  await page.keyboard.press('Enter');
  await expect(ads.locator('table')).toHaveAttribute('data-sort', 'clicks', { timeout: 30_000 });
  await readyTable(page, 'ad');
  await expect(ads.locator('th[aria-sort="descending"]')).toContainText('Clicks');
  await expect(ads.getByRole('button', { name: /^Clicks\s*, sort by clicks/ })).toHaveAttribute('aria-pressed', 'true');
  const byClicks = await expectTableEqualsApi(page, 'ad', 'time_range=7d&traffic=live&sort=clicks');
  for (let i = 1; i < byClicks.rows.length; i++) expect(Number(byClicks.rows[i - 1].clicks)).toBeGreaterThanOrEqual(Number(byClicks.rows[i].clicks));
  await checkPage(page, testInfo, 'breakdown-sorted');

  // The CSV the page downloads is, byte for byte, what the API sends.
  await expect(async () => {
    const download = page.waitForEvent('download');
    await ads.getByRole('button', { name: 'Download top ads CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('agent_demo-7d-by-ad.csv');
    const csv = await readFile((await file.path())!, 'utf8');
    const api = await ownerApi(owner, '/agent/dashboard/reporting/breakdown?time_range=7d&by=ad&sort=clicks&limit=10&traffic=live&format=csv');
    expect(csv.split('\r\n')[0]).toBe('id,exposures,clicks,engagements,conversions,earnings_micros');
    expect(csv).toMatch(/\r\n\(other\),-?\d+,/);
    expect(csv).toBe(api.text);
  }).toPass({ timeout: 20_000, intervals: [500, 1000] });
  await expect(page.getByText('Downloaded agent_demo-7d-by-ad.csv.')).toBeVisible();

  // Another range and the test traffic: the tables follow the page's choices.
  await page.getByRole('radio', { name: 'Test traffic (test keys)' }).check();
  await page.getByRole('combobox', { name: 'Range' }).selectOption('all');
  await expect(page).toHaveURL(/traffic=test/);
  await readyTable(page, 'product');
  const products = await expectTableEqualsApi(page, 'product', 'time_range=all&traffic=test&sort=earnings_micros');
  expect(products.is_test).toBe(true);
  await checkPage(page, testInfo, 'breakdown-test-all');
  expect(errors).toEqual([]);
});
