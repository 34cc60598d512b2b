import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startGateway, startRecommendations, startReportingProjection, useTestStack, waitFor } from '../support/index.js';

/**
 * A newcomer's first hour after `npm start`: `npm run demo` (built) fills the demo platform,
 * its keys and the sample catalog; then the example a platform would write
 * (examples/recommend-and-report.ts, `npm run example`, with @vendor/weave-node) gets
 * recommendations for a question right away, opens the exposure and click links, and sees the
 * platform's report count both. Against real services, NATS, PostgreSQL and Redis.
 */
const ROOT = process.cwd();
const run = promisify(execFile);
const stack = useTestStack();
let base: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'weave-newcomer-'));
  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 500 }));
  stack.track(await startRecommendations(stack.urls));
  ({ base } = await startGateway(stack, { oidc: false, extra: { LOG_LEVEL: 'warn' } }));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

it('demo, then the example script: recommendations at once, and the report moves', async () => {
  const env = { ...process.env, NATS_URL: stack.nats.url, DATABASE_URL: stack.db.url, LAUNCHER_DATA_DIR: dataDir, PUBLIC_BASE_URL: base };
  const demo = JSON.parse((await run(process.execPath, [join(ROOT, 'dist', 'apps', 'demo-seed', 'src', 'main.js'), '--json'], { cwd: ROOT, env, timeout: 120000 })).stdout) as {
    keys: Record<'live' | 'test', { api_key: string }>;
    catalog: { imported: number };
    expected_reports: Record<'live' | 'test', { exposures: number; clicks: number }>;
  };
  expect(demo.catalog.imported).toBeGreaterThan(0);
  // The demo returns once JetStream has its week, not once the projection has applied it: a
  // report read in between counts part of the week, and the rest would arrive with the
  // example's own exposure. So the example starts when the report shows the whole week.
  const expected = demo.expected_reports.test;
  expect(expected.exposures).toBeGreaterThan(0);
  await waitFor(
    async () => {
      const response = await fetch(`${base}/agent/reporting?time_range=all`, { headers: { authorization: `Bearer ${demo.keys.test.api_key}` } });
      const report = response.status === 200 ? ((await response.json()) as { exposures: number; clicks: number }) : undefined;
      return report?.exposures === expected.exposures && report.clicks === expected.clicks ? report : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: `the report showing the demo's week (${expected.exposures} exposures, ${expected.clicks} clicks)` },
  );

  // As the demo's summary says: npm run -s example with the test key and the gateway's address.
  const { stdout, stderr } = await run('npm', ['run', '-s', 'example', '--', '--json'], {
    cwd: ROOT,
    env: { ...env, SERVICE_API_KEY: demo.keys.test.api_key, SERVICE_API_BASE_URL: base },
    timeout: 240000,
  });
  const result = JSON.parse(stdout) as {
    recommendations: { product_title: string; contextual_relevance_score: number }[];
    exposure_status: number;
    click_status: number;
    before: { exposures: number; clicks: number };
    after: { exposures: number; clicks: number };
  };
  expect(result.recommendations.length).toBeGreaterThan(0);
  expect(result.recommendations[0].product_title).toMatch(/running shoes/i);
  expect([result.exposure_status, result.click_status]).toEqual([204, 302]);
  // The demo's week is in the report before; the example's exposure and click are added to it.
  expect(result.before).toMatchObject({ exposures: expected.exposures, clicks: expected.clicks });
  expect(result.after.exposures).toBe(expected.exposures + 1);
  expect(result.after.clicks).toBe(expected.clicks + 1);
  // What a person reads (stderr with --json): the recommendations and the report moving.
  expect(stderr).toMatch(/recommendation\(s\)/);
  expect(stderr).toMatch(/^report: exposures \d+ → \d+, clicks \d+ → \d+$/m);
}, 300000);
