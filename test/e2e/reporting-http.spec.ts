import type { IdentityRepository } from '#libs/identity';
import {
  connectStackProducer,
  identityOf,
  seedPlatform,
  startGateway,
  startReportingProjection,
  useTestStack,
  waitFor,
  type Producer,
  type ServiceUnderTest,
} from '../support/index.js';
import type { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';

/**
 * The whole reporting path over HTTP: producers publish to JetStream, reporting-projection
 * applies and publishes, the gateway authenticates the key and answers. Both traffic modes,
 * every status, stale reports, a failed publication, and reporting being down.
 */
const REPORT_FIELDS: Record<string, string | string[]> = {
  agent_id: 'string',
  time_range: 'string',
  start_at: ['string', 'null'],
  end_at: 'string',
  currency: 'string',
  is_test: 'boolean',
  report_schema_version: 'number',
  earnings_basis: 'string',
  status: 'string',
  earnings_coverage: 'string',
  processed_through: 'string',
  updated_at: 'string',
  accounting_reconciled_through: ['string', 'null'],
  timezone: 'string',
  exposures: 'number',
  clicks: 'number',
  engagements: 'number',
  conversions: 'number',
  earnings_micros: 'number',
  earnings_excluded_recommendations: 'number',
  pending_earnings_recommendations: 'number',
  accounting_review_required: 'number',
  earnings_adapter_version: 'string',
};

const stack = useTestStack({ streams: true });
let reporting: ServiceUnderTest<ReportingProjectionEnv> | undefined;
let identity: IdentityRepository;
let producer: Producer;
let base: string;
const keys: Record<string, string> = {};

const startReporting = (extra: Record<string, number> = {}) =>
  startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 300, ...extra });

const get = (key: string, query = '') => fetch(`${base}/agent/reporting${query}`, { headers: { authorization: `Bearer ${key}` } });

async function ready(key: string, query: string): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      const response = await get(key, query);
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    },
    { timeoutMs: 20000, intervalMs: 150, what: `200 for ${query}` },
  );
}

beforeAll(async () => {
  producer = await connectStackProducer(stack);
  reporting = await startReporting();
  stack.atEnd(() => reporting?.close());
  ({ base } = await startGateway(stack, { oidc: false, extra: { REPORTING_REQUEST_TIMEOUT_MS: '1000' } }));
  identity = await identityOf(stack);
  for (const agent of ['agent_e2e', 'agent_other']) {
    const seeded = await seedPlatform(stack, agent, { keys: ['live', 'test'] });
    keys[`${agent}:live`] = seeded.keys.live;
    keys[`${agent}:test`] = seeded.keys.test;
  }

  // Live: r1 shown, r2 clicked+engaged, r3 converted (billable, USD entry), r4 generated only.
  // Test: t1 clicked. Another platform: o1 converted (must never leak).
  const created = new Date(Date.now() - 30 * 60_000).toISOString();
  const lifecycle = (kind: string, rec: string, agent: string, traffic: string, extra: object = {}) =>
    producer.publish({
      subject: `events.recommendation.${kind}`,
      id: `${kind}_${rec}`,
      payload: { event_id: `${kind}_${rec}`, recommendation_id: rec, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created, ...extra },
    });
  await lifecycle('shown', 'r1', 'agent_e2e', 'live');
  await lifecycle('clicked', 'r2', 'agent_e2e', 'live');
  await lifecycle('engaged', 'r2', 'agent_e2e', 'live');
  await lifecycle('converted', 'r3', 'agent_e2e', 'live', { billable: true });
  await lifecycle('generated', 'r4', 'agent_e2e', 'live');
  await lifecycle('clicked', 't1', 'agent_e2e', 'test');
  await lifecycle('converted', 'o1', 'agent_other', 'live');
  await producer.publish({
    subject: 'events.accounting.entry',
    id: 'acc_r3',
    payload: { entry_id: 'acc_r3', agent_id: 'agent_e2e', traffic: 'live', recommendation_id: 'r3', amount_micros: 2_500_000, currency: 'USD', recorded_at: created },
  });
  await producer.publish({
    subject: 'events.accounting.reconciled',
    id: 'wm1',
    payload: { event_id: 'wm1', traffic: 'live', reconciled_through: new Date(Date.now() + 3_600_000).toISOString() },
  });
});

describe('GET /agent/reporting end to end', () => {
  it('202 with Retry-After: 60 and only preparation metadata for a new scope', async () => {
    const response = await get(keys['agent_e2e:live'], '?time_range=today');
    expect(response.status).toBe(202);
    expect(response.headers.get('retry-after')).toBe('60');
    expect(await response.json()).toEqual({ status: 'preparing', agent_id: 'agent_e2e', time_range: 'today', is_test: false, report_schema_version: 1 });
  });

  it('200 with every Report field of SPEC, typed, and the live counts of a live key', async () => {
    const report = await waitFor(
      async () => {
        const r = await ready(keys['agent_e2e:live'], '');
        return r.exposures === 3 && r.earnings_micros === 2_500_000 ? r : undefined;
      },
      { what: 'live counts applied' },
    );
    expect(Object.keys(report).sort()).toEqual(Object.keys(REPORT_FIELDS).sort());
    for (const [field, type] of Object.entries(REPORT_FIELDS)) {
      const actual = report[field] === null ? 'null' : typeof report[field];
      expect({ field, type: [type].flat().includes(actual) }).toEqual({ field, type: true });
    }
    expect(report).toMatchObject({
      agent_id: 'agent_e2e',
      time_range: '30d',
      is_test: false,
      currency: 'USD',
      status: 'ready',
      timezone: 'UTC',
      exposures: 3,
      clicks: 2,
      engagements: 1,
      conversions: 1,
      earnings_micros: 2_500_000,
      earnings_excluded_recommendations: 0,
      pending_earnings_recommendations: 0,
      accounting_review_required: 0,
      earnings_coverage: 'complete',
    });
    const end = Date.parse(report.end_at as string);
    expect(end).toBe(Date.parse(report.processed_through as string));
    expect(end % 60_000).toBe(0);
    expect(end - Date.parse(report.start_at as string)).toBe(30 * 86_400_000);
  });

  it('a test key sees test traffic only, with no watermark for test accounting', async () => {
    const report = await waitFor(async () => {
      const r = await ready(keys['agent_e2e:test'], '?time_range=7d');
      return r.clicks === 1 ? r : undefined;
    });
    expect(report).toMatchObject({ is_test: true, exposures: 1, clicks: 1, conversions: 0, earnings_micros: 0, earnings_coverage: 'unavailable', accounting_reconciled_through: null });
  });

  it('never shows another platform its data', async () => {
    const other = await waitFor(async () => {
      const r = await ready(keys['agent_other:live'], '?time_range=1d');
      return r.conversions === 1 ? r : undefined;
    });
    expect(other).toMatchObject({ agent_id: 'agent_other', exposures: 1, clicks: 1, conversions: 1, earnings_micros: 0 });
  });

  it('`all` has a null start and `today` starts at UTC midnight of the cutoff', async () => {
    const all = await ready(keys['agent_e2e:live'], '?time_range=all');
    expect(all.start_at).toBeNull();
    expect(all.exposures).toBe(3);
    const today = await ready(keys['agent_e2e:live'], '?time_range=today');
    const cutoff = new Date(today.processed_through as string);
    expect(today.start_at).toBe(new Date(Date.UTC(cutoff.getUTCFullYear(), cutoff.getUTCMonth(), cutoff.getUTCDate())).toISOString());
  });

  it('401, 403 and 422 come before reporting is asked, in that order', async () => {
    expect((await fetch(`${base}/agent/reporting?time_range=bogus`)).status).toBe(401);
    expect((await get('sk_live_0000000000000000000000000000000000000000', '?time_range=bogus')).status).toBe(401);
    const bad = await get(keys['agent_e2e:live'], '?time_range=7d&agent_id=agent_other');
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await bad.json()).toMatchObject({ status: 422 });
    expect((await get(keys['agent_e2e:live'], '?time_range=')).status).toBe(422);
    expect((await get(keys['agent_e2e:live'], '?time_range=7d&time_range=1d')).status).toBe(422);
    await identity.setStatus('agent_other', 'suspended');
    await waitFor(async () => (await get(keys['agent_other:live'], '?time_range=bogus')).status === 403, { timeoutMs: 2000, what: '403' });
    await identity.setStatus('agent_other', 'active');
  });

  it('a failed publication keeps serving the last snapshot', async () => {
    const before = await ready(keys['agent_e2e:live'], '?time_range=7d');
    const reportingDb = reporting!.app.get((await import('typeorm')).DataSource);
    await reportingDb.query('ALTER TABLE reporting.rollup_day RENAME TO rollup_day_hidden');
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const [state] = await reportingDb.query('SELECT last_error FROM reporting.publication_state');
      expect(state.last_error).toMatch(/rollup_day/);
      const during = await ready(keys['agent_e2e:live'], '?time_range=7d');
      expect(during.exposures).toBe(before.exposures);
    } finally {
      await reportingDb.query('ALTER TABLE reporting.rollup_day_hidden RENAME TO rollup_day');
    }
  });

  it('503 quickly while reporting is down, then recovers; stale when behind the cutoff', async () => {
    await reporting!.close();
    reporting = undefined;
    const started = Date.now();
    const down = await get(keys['agent_e2e:live'], '?time_range=7d');
    expect(down.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await down.json()).toMatchObject({ status: 503 });

    reporting = await startReporting({ REPORTING_STALE_AFTER_MS: 1000 });
    const stale = await waitFor(async () => {
      const r = await ready(keys['agent_e2e:live'], '?time_range=7d');
      return Date.now() - Date.parse(r.processed_through as string) > 1000 ? r : undefined;
    }, { timeoutMs: 5000, what: 'a report older than the stale threshold' });
    expect(stale.status).toBe('stale');
    expect(stale.exposures).toBe(3);
  });
});
