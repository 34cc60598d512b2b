import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';
import { DateTime } from 'luxon';
import { checkPage, ownerApi, ownerJson, signIn, watchForErrors } from './support/dashboard.js';
import { system } from './support/system.js';

/**
 * The reporting pages against the real system: what the page shows is what the owner API
 * answers (read from the page's data attributes and its data table, not from pixels), which is
 * what `npm run demo` published. Runs in file order: the timezone change comes last.
 */
const RANGES = ['today', '1d', '7d', '30d', '90d', 'all'] as const;
const COUNTS = ['exposures', 'clicks', 'engagements', 'conversions'] as const;
const FIGURES = [...COUNTS, 'earnings_micros'] as const;
type Json = Record<string, unknown>;
interface Series extends Json {
  processed_through: string;
  buckets: Json[];
}

const grouped = (value: unknown) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const figures = (report: Json) => Object.fromEntries(FIGURES.map((f) => [f, report[f]]));

/** The Report of each range as the page holds it (data-report of each row, once all are ready). */
async function pageReports(page: Page): Promise<Record<string, Json>> {
  for (const range of RANGES) await expect(page.locator(`tr[data-range="${range}"]`)).toHaveAttribute('data-state', 'ready');
  const reports: Record<string, Json> = {};
  for (const range of RANGES) reports[range] = JSON.parse((await page.locator(`tr[data-range="${range}"]`).getAttribute('data-report'))!) as Json;
  return reports;
}

/**
 * The page's totals equal GET /agent/dashboard/reporting for each range, field for field, at
 * the same publication: the reports move with every publication (every 1.5 s here), so when one
 * happened between the page's requests and the test's, the page is refreshed and both asked again.
 */
async function expectTotalsEqualApi(page: Page, traffic: 'live' | 'test'): Promise<Record<string, Json>> {
  let shown: Record<string, Json> = {};
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    shown = await pageReports(page);
    const api = Object.fromEntries(await Promise.all(RANGES.map(async (range) => [range, await ownerJson<Json>(system().owner, `/agent/dashboard/reporting?time_range=${range}&traffic=${traffic}`)] as const)));
    expect(shown).toEqual(api);
  }).toPass({ timeout: 20_000, intervals: [200, 500, 1000] });
  for (const range of RANGES) {
    const row = page.locator(`tr[data-range="${range}"]`);
    for (const figure of COUNTS) await expect(row.locator(`td[data-figure="${figure}"]`)).toHaveText(grouped(shown[range]![figure]));
    await expect(row.locator('[data-figure="timezone"]')).toHaveText(String(shown[range]!.timezone));
    expect(shown[range]!.is_test).toBe(traffic === 'test');
  }
  return shown;
}

test('the totals of the six ranges are what /agent/dashboard/reporting answers, for live and then for test traffic, and what the demo published', async ({ page }, testInfo) => {
  const { owner, demo } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/reporting');
  await expect(page.getByRole('radio', { name: 'Live traffic (live keys)' })).toBeChecked();

  const live = await expectTotalsEqualApi(page, 'live');
  expect(figures(live.all!)).toEqual(figures(demo.expected_reports.live));
  expect(live.all!.earnings_micros).toBeGreaterThan(0);
  await expect(page.locator('tr[data-range="all"] td[data-figure="earnings_micros"]')).toHaveText(/^USD [\d,]+\.\d{2,6}$/);
  await checkPage(page, testInfo, 'reporting-live');

  await page.getByRole('radio', { name: 'Test traffic (test keys)' }).check();
  await expect(page).toHaveURL(/traffic=test/);
  const testTraffic = await expectTotalsEqualApi(page, 'test');
  expect(figures(testTraffic.all!)).toEqual(figures(demo.expected_reports.test));
  expect(testTraffic.all!.exposures).not.toBe(live.all!.exposures);
  await checkPage(page, testInfo, 'reporting-test');
  expect(errors).toEqual([]);
});

test("the chart's series is the API's buckets, so is its data table, and the CSV download is the API's CSV; a new scope is prepared and shown by itself", async ({ page }, testInfo) => {
  const { owner } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/reporting?traffic=live&range=7d&granularity=day');
  const figure = page.getByTestId('series');

  /** The figure's buckets equal the API's series at the same publication (refreshing as above). */
  async function expectSeriesEqualsApi(query: string): Promise<Series> {
    let series: Series | undefined;
    await expect(async () => {
      await expect(figure).toBeVisible();
      const shownThrough = await figure.getAttribute('data-processed-through');
      series = await ownerJson<Series>(owner, `/agent/dashboard/reporting/series?${query}`);
      if (series.processed_through !== shownThrough) {
        await page.getByRole('button', { name: 'Refresh' }).click();
        throw new Error(`published meanwhile: page ${shownThrough}, API ${series.processed_through}`);
      }
      expect(JSON.parse((await figure.getAttribute('data-series'))!)).toEqual(series.buckets);
      await expect(figure).toHaveAttribute('data-granularity', String(series.granularity));
      await expect(figure).toHaveAttribute('data-timezone', String(series.timezone));
    }).toPass({ timeout: 20_000, intervals: [200, 500, 1000] });
    return series!;
  }

  const daily = await expectSeriesEqualsApi('time_range=7d&granularity=day&traffic=live');
  expect(daily.buckets.length).toBeGreaterThanOrEqual(7);
  expect(daily.buckets.reduce((sum, b) => sum + Number(b.exposures), 0)).toBeGreaterThan(0);
  // The chart is drawn (a canvas) and names what it shows; the numbers are in the table.
  await expect(page.getByTestId('series-chart').locator('canvas')).toHaveCount(1);
  await expect(page.getByTestId('series-chart')).toHaveAttribute('aria-label', /exposures, clicks, engagements, conversions and earnings/);
  await page.getByText('Show the data as a table').click();
  const rows = page.getByTestId('series-table').locator('tbody tr');
  await expect(rows).toHaveCount(daily.buckets.length);
  for (const [index, bucket] of daily.buckets.entries()) {
    await expect(rows.nth(index)).toHaveAttribute('data-start', String(bucket.start_at));
    await expect(rows.nth(index).locator('td').first()).toHaveText(grouped(bucket.exposures));
  }
  await checkPage(page, testInfo, 'reporting-series-table');

  // The CSV the page downloads is, byte for byte, what the API sends.
  await expect(async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('agent_demo-7d-day.csv');
    const csv = await readFile((await file.path())!, 'utf8');
    const api = await ownerApi(owner, '/agent/dashboard/reporting/series?time_range=7d&granularity=day&traffic=live&format=csv');
    expect(api.headers.get('content-disposition')).toBe('attachment; filename="agent_demo-7d-day.csv"');
    expect(csv.split('\r\n')[0]).toBe('bucket_start,bucket_end,exposures,clicks,engagements,conversions,earnings_micros');
    expect(csv).toBe(api.text);
  }).toPass({ timeout: 20_000, intervals: [500, 1000] });
  await expect(page.getByText('Downloaded agent_demo-7d-day.csv.')).toBeVisible();

  // Hourly buckets of 7 days: nobody asked for them yet, so the page first says "being
  // prepared" (202) and then shows them by itself.
  await page.getByRole('combobox', { name: 'Buckets' }).selectOption('hour');
  await expect(page).toHaveURL(/range=7d&granularity=hour/);
  await expect(page.locator('[data-state="preparing"]')).toContainText('Being prepared');
  await checkPage(page, testInfo, 'reporting-preparing');
  await expect(figure).toHaveAttribute('data-granularity', 'hour', { timeout: 30_000 });
  const hourly = await expectSeriesEqualsApi('time_range=7d&granularity=hour&traffic=live');
  expect(hourly.buckets.length).toBeGreaterThanOrEqual(7 * 24);
  expect(FIGURES.map((f) => hourly.buckets.reduce((sum, b) => sum + Number(b[f]), 0))).toEqual(FIGURES.map((f) => daily.buckets.reduce((sum, b) => sum + Number(b[f]), 0)));
  await checkPage(page, testInfo, 'reporting-hourly');
  expect(errors).toEqual([]);
});

test('a 503 says "try again", and trying again works once the service answers', async ({ page }, testInfo) => {
  const { owner, pids } = system();
  const errors = watchForErrors(page, [/status of 503/]);
  await signIn(page, owner, '#/reporting');
  await expect(page.locator('tr[data-range="all"]')).toHaveAttribute('data-state', 'ready');
  // reporting-projection stops answering (frozen, not killed: the launcher would stop everything).
  process.kill(pids['reporting-projection']!, 'SIGSTOP');
  try {
    await page.getByRole('button', { name: 'Refresh' }).click();
    const row = page.locator('tr[data-range="all"]');
    await expect(row).toHaveAttribute('data-state', 'unavailable');
    await expect(row.getByRole('alert')).toContainText('Temporarily unavailable.');
    await expect(row.getByRole('alert')).toContainText('Please try again.');
    await expect(row.getByRole('button', { name: 'Try again' })).toBeVisible();
    await checkPage(page, testInfo, 'reporting-unavailable');
  } finally {
    process.kill(pids['reporting-projection']!, 'SIGCONT');
  }
  await page.locator('tr[data-range="all"]').getByRole('button', { name: 'Try again' }).click();
  await expect(page.locator('tr[data-range="all"]')).toHaveAttribute('data-state', 'ready');
  expect(errors).toEqual([]);
});

test('changing the reporting timezone to Asia/Kathmandu: today starts at local midnight there', async ({ page }, testInfo) => {
  const { owner } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/timezone');
  await expect(page.getByTestId('current-timezone')).toContainText('UTC');
  await checkPage(page, testInfo, 'timezone');

  await page.getByLabel('Search time zones').fill('Kathmandu');
  await expect(page.getByText('1 matching zone', { exact: true })).toBeVisible();
  await page.getByLabel('Time zone', { exact: true }).selectOption('Asia/Kathmandu');
  const midnight = DateTime.now().setZone('Asia/Kathmandu').startOf('day');
  const preview = page.getByTestId('today-preview');
  await expect(preview).toHaveAttribute('data-zone', 'Asia/Kathmandu');
  await expect(preview).toHaveAttribute('data-start', midnight.toUTC().toISO()!);
  await expect(preview).toContainText('UTC offset +05:45');
  await page.getByRole('button', { name: 'Use Asia/Kathmandu' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toHaveText('Saved: the reporting timezone is now Asia/Kathmandu. The next completed report uses it.');
  await checkPage(page, testInfo, 'timezone-saved');

  // Reporting: once a report in the new zone is published, "today" starts at Kathmandu's midnight.
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Reporting', exact: true }).click();
  const today = page.locator('tr[data-range="today"]');
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(today).toHaveAttribute('data-state', 'ready', { timeout: 2000 });
    const report = JSON.parse((await today.getAttribute('data-report'))!) as Json;
    expect(report.timezone).toBe('Asia/Kathmandu');
    expect(Date.parse(String(report.start_at))).toBe(midnight.toMillis());
  }).toPass({ timeout: 30_000, intervals: [500, 1000, 2000] });
  await expect(today.locator('[data-figure="timezone"]')).toHaveText('Asia/Kathmandu');
  const api = await ownerJson<Json>(owner, '/agent/dashboard/reporting?time_range=today&traffic=live');
  expect({ timezone: api.timezone, start: Date.parse(String(api.start_at)) }).toEqual({ timezone: 'Asia/Kathmandu', start: midnight.toMillis() });
  expect(errors).toEqual([]);
});
