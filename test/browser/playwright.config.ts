import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { defineConfig } from '@playwright/test';

/**
 * Browser tests (`npm run test:browser`, part of `npm test`) drive Debian's chromium
 * (`apt-get install -y chromium`, which .ci/run does when it is missing), found on PATH
 * (CHROMIUM_PATH overrides) or at /usr/bin/chromium, never a browser downloaded by Playwright.
 * The global setup starts the system once for the whole suite the way `npm start` does
 * (support/global-setup.ts); they need `npm run build` first (the npm script runs it).
 * Screenshots of every page go to test-results/browser/<test>/.
 */
function chromium(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const candidate = join(directory, name);
      if (existsSync(candidate)) return candidate;
    }
  }
  return '/usr/bin/chromium';
}

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../../test-results/browser',
  globalSetup: './support/global-setup.ts',
  timeout: 60_000,
  // The whole suite, the system's start included, stays well under this (about a minute).
  globalTimeout: 10 * 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  forbidOnly: true,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    locale: 'en-GB',
    timezoneId: 'UTC',
    viewport: { width: 1280, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: chromium(),
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
