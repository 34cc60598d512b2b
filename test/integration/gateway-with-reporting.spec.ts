import { seedPlatform, startGateway, startReportingProjection, useTestStack, waitFor } from '../support/index.js';

/** The gateway in front of the real reporting-projection: 202 while preparing, then 200. */
const stack = useTestStack();
let base: string;

beforeAll(async () => {
  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 200 }));
  ({ base } = await startGateway(stack, { oidc: false, extra: { LOG_LEVEL: 'warn' } }));
});

it('answers 202 with Retry-After: 60 for a new scope, then the report of the key traffic', async () => {
  const { key: api_key } = await seedPlatform(stack, 'agent_full', { keys: ['test'] });
  const ask = () => fetch(`${base}/agent/reporting?time_range=7d`, { headers: { authorization: `Bearer ${api_key}` } });

  const first = await ask();
  expect(first.status).toBe(202);
  expect(first.headers.get('retry-after')).toBe('60');
  expect(await first.json()).toMatchObject({ status: 'preparing', agent_id: 'agent_full', time_range: '7d', is_test: true });

  const report = await waitFor(
    async () => {
      const response = await ask();
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    },
    { timeoutMs: 20000, intervalMs: 200, what: 'a ready report' },
  );
  expect(report).toMatchObject({ agent_id: 'agent_full', time_range: '7d', is_test: true, exposures: 0, report_schema_version: 1 });
});
