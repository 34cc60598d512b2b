import { parse } from 'csv-parse/sync';
import { SERIES_FIGURES, type Report, type ReportBreakdown } from '#libs/contracts';
import {
  connectStackProducer,
  expectProblem,
  seedPlatform,
  startGateway,
  startIdentityProvider,
  startReportingProjection,
  useTestStack,
  waitFor,
  type Producer,
} from '../support/index.js';
import { signIdToken } from '../support/oidc.js';

/**
 * Breakdowns by ad and product over real HTTP (DESIGN §9): the gateway with a real JWKS server,
 * NATS request/reply to the real reporting-projection, events through JetStream. Rows + other
 * equal the Report of the same processed_through for every range; rows are ordered and limited as
 * asked; a recommendation counted before its `generated` event is unattributed (id null) and
 * moves to its ad when that event arrives; the owner's route answers what the key route answers
 * for that traffic; CSV parsed back equals the JSON; the check order is 401, 403, 422.
 */

const AGENT = 'agent_breakdown';
const stack = useTestStack();
let base: string;
let producer: Producer;
let keys: Record<'live' | 'test', string>;
let owner: string;
let suspendedKey: string;
let suspendedOwner: string;
const ADS = ['ad_alpha', 'ad_beta', 'ad_gamma', 'ad_delta', 'ad,comma'];
/** Recommendations published per traffic, all shown. */
const published = { live: 0, test: 0 };

beforeAll(async () => {
  const { jwks, key } = await startIdentityProvider(stack);
  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 300 }));
  ({ base } = await startGateway(stack, { jwksUrl: jwks.url }));
  keys = (await seedPlatform(stack, AGENT, { owner: 'uid_breakdown', keys: ['live', 'test'] })).keys;
  owner = await signIdToken(key, { sub: 'uid_breakdown' });
  const suspended = await seedPlatform(stack, 'agent_breakdown_s', { owner: 'uid_breakdown_s', keys: ['live'] });
  suspendedKey = suspended.key;
  suspendedOwner = await signIdToken(key, { sub: 'uid_breakdown_s' });
  await suspended.identity.setStatus('agent_breakdown_s', 'suspended');

  producer = await connectStackProducer(stack);
  // Two days of activity: ads with different weights (ad_alpha most often, so the ranks differ by figure),
  // every fifth recommendation without a generated event (unattributed).
  const now = Date.now();
  for (let i = 0, t = now - 2 * 86_400_000; t < now - 120_000; i++, t += 41 * 60_000) {
    const traffic = i % 2 ? 'test' : 'live';
    const created = new Date(t).toISOString();
    const rec = { recommendation_id: `rec_b_${i}`, agent_id: AGENT, traffic, recommendation_created_at: created, occurred_at: created };
    const j = Math.floor(i / 2);
    const ad = ADS[[0, 0, 0, 1, 1, 2, 3, 4][j % 8]];
    if (j % 5 !== 0) {
      await producer.publish({ subject: 'events.recommendation.generated', id: `evt_gen_${i}`, payload: { ...rec, event_id: `evt_gen_${i}`, ad_id: ad, product_id: `prod_${i % 3}` } });
    }
    await producer.publish({ subject: 'events.recommendation.shown', id: `evt_shown_${i}`, payload: { ...rec, event_id: `evt_shown_${i}`, ad_id: 'ad_never_counted' } });
    if (j % 4 === 1 || ad === 'ad_gamma') {
      await producer.publish({ subject: 'events.recommendation.clicked', id: `evt_click_${i}`, payload: { ...rec, event_id: `evt_click_${i}`, billable: true } });
      await producer.publish({
        subject: 'events.accounting.entry',
        id: `acc_${i}`,
        payload: { entry_id: `acc_${i}`, agent_id: AGENT, traffic, recommendation_id: `rec_b_${i}`, amount_micros: 1_000_000 + i * 1000, currency: 'USD', recorded_at: created },
      });
    }
    published[traffic] += 1;
  }
  await waitFor(
    async () => {
      const response = await get('/agent/reporting?time_range=7d', keys.live);
      return response.status === 200 && ((await response.json()) as Report).exposures === published.live;
    },
    { timeoutMs: 30000, intervalMs: 200, what: 'the live 7d report of every event' },
  );
});

function get(path: string, credential?: string): Promise<Response> {
  return fetch(`${base}${path}`, { headers: credential ? { authorization: `Bearer ${credential}` } : {} });
}

/** The 200 answer, after the 202s of a scope being prepared. */
async function ready(path: string, credential: string): Promise<Response> {
  return waitFor(
    async () => {
      const response = await get(path, credential);
      if (response.status === 202) {
        expect(response.headers.get('retry-after')).toBe('60');
        expect(await response.json()).toMatchObject({ status: 'preparing', agent_id: AGENT, report_schema_version: 1 });
        return undefined;
      }
      return response;
    },
    { timeoutMs: 10000, intervalMs: 100, what: `200 from ${path}` },
  );
}

async function json<T>(path: string, credential: string): Promise<T> {
  const response = await ready(path, credential);
  expect([path, response.status]).toEqual([path, 200]);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.headers.get('cache-control')).toBe('private, no-store');
  return (await response.json()) as T;
}

/** A report and a breakdown of one publication. */
async function atSameCutoff(reportPath: string, breakdownPath: string, credential: string): Promise<{ report: Report; breakdown: ReportBreakdown }> {
  return waitFor(
    async () => {
      const report = await json<Report>(reportPath, credential);
      const breakdown = await json<ReportBreakdown>(breakdownPath, credential);
      return report.processed_through === breakdown.processed_through ? { report, breakdown } : undefined;
    },
    { timeoutMs: 10000, intervalMs: 50, what: 'a report and a breakdown at one processed_through' },
  );
}

const sums = (b: ReportBreakdown) => Object.fromEntries(SERIES_FIGURES.map((name) => [name, b.rows.reduce((sum, row) => sum + row[name], b.other[name])]));
const figures = (report: Report) => Object.fromEntries(SERIES_FIGURES.map((name) => [name, report[name]]));

function expectOrdered(b: ReportBreakdown, sort: keyof ReportBreakdown['other']): void {
  for (let i = 1; i < b.rows.length; i++) {
    const [a, c] = [b.rows[i - 1], b.rows[i]];
    expect(a[sort]).toBeGreaterThanOrEqual(c[sort]);
    if (a[sort] === c[sort]) expect(c.id === null || (a.id !== null && a.id < c.id)).toBe(true);
  }
}

describe('GET /agent/reporting/breakdown (API key)', () => {
  it('answers 202 with Retry-After while a new scope is prepared, then 200', async () => {
    const first = await get('/agent/reporting/breakdown?time_range=1d&by=product&sort=clicks', keys.test);
    expect(first.status).toBe(202);
    expect(first.headers.get('retry-after')).toBe('60');
    expect(await first.json()).toEqual({ status: 'preparing', agent_id: AGENT, time_range: '1d', is_test: true, report_schema_version: 1 });
    expect((await json<ReportBreakdown>('/agent/reporting/breakdown?time_range=1d&by=product&sort=clicks', keys.test)).by).toBe('product');
  });

  it.each(['today', '1d', '7d', '30d', '90d', 'all'])('%s: rows + other equal the report of the same processed_through, by ad and by product', async (range) => {
    for (const traffic of ['live', 'test'] as const) {
      for (const by of ['ad', 'product']) {
        const { report, breakdown } = await atSameCutoff(`/agent/reporting?time_range=${range}`, `/agent/reporting/breakdown?time_range=${range}&by=${by}&limit=2`, keys[traffic]);
        expect(Object.keys(breakdown)).toEqual(['agent_id', 'time_range', 'by', 'timezone', 'is_test', 'start_at', 'end_at', 'processed_through', 'status', 'currency', 'rows', 'other']);
        expect(breakdown).toMatchObject({ agent_id: AGENT, time_range: range, by, timezone: 'UTC', is_test: traffic === 'test', start_at: report.start_at, end_at: report.end_at, status: 'ready', currency: 'USD' });
        expect(sums(breakdown)).toEqual(figures(report));
        expect(breakdown.rows.length).toBeLessThanOrEqual(2);
        expectOrdered(breakdown, 'earnings_micros');
      }
    }
  });

  it('lists the first limit ids by the sort figure, ties by id, the unattributed row as id null', async () => {
    const all = await json<ReportBreakdown>('/agent/reporting/breakdown?time_range=7d&by=ad&sort=exposures&limit=100', keys.live);
    expect(all.other).toEqual({ exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 });
    expect(all.rows.map((row) => row.id)).toEqual(expect.arrayContaining([...ADS, null]));
    expect(all.rows.map((row) => row.id)).not.toContain('ad_never_counted');
    expect(all.rows[0].id).toBe('ad_alpha');
    expectOrdered(all, 'exposures');
    for (const sort of ['exposures', 'clicks', 'conversions', 'earnings_micros'] as const) {
      const top = await waitFor(
        async () => {
          const full = await json<ReportBreakdown>(`/agent/reporting/breakdown?time_range=7d&by=ad&sort=${sort}&limit=100`, keys.live);
          const three = await json<ReportBreakdown>(`/agent/reporting/breakdown?time_range=7d&by=ad&sort=${sort}&limit=3`, keys.live);
          return full.processed_through === three.processed_through ? { full, three } : undefined;
        },
        { timeoutMs: 10000, intervalMs: 50, what: 'two breakdowns of one publication' },
      );
      expectOrdered(top.full, sort);
      expect(top.three.rows).toEqual(top.full.rows.slice(0, 3));
      expect(sums(top.three)).toEqual(sums(top.full));
    }
    // ad_gamma has every recommendation clicked: first by clicks per recommendation is not the rule, the count is.
    const byClicks = await json<ReportBreakdown>('/agent/reporting/breakdown?time_range=7d&by=ad&sort=clicks&limit=100', keys.live);
    expect(byClicks.rows.find((row) => row.id === 'ad_gamma')!.clicks).toBe(byClicks.rows.find((row) => row.id === 'ad_gamma')!.exposures);
    // Defaults: 30d, limit 20, sorted by earnings.
    expect(await json<ReportBreakdown>('/agent/reporting/breakdown?by=ad', keys.live)).toMatchObject({ time_range: '30d', by: 'ad' });
  });

  it('counts a recommendation as unattributed until its generated event arrives, then under its ad', async () => {
    const path = '/agent/reporting/breakdown?time_range=1d&by=ad&sort=exposures&limit=100';
    const created = new Date(Date.now() - 3_600_000).toISOString();
    const rec = { recommendation_id: 'rec_late_gen', agent_id: AGENT, traffic: 'live', recommendation_created_at: created, occurred_at: created };
    const before = await json<ReportBreakdown>(path, keys.live);
    const unattributed = (b: ReportBreakdown) => b.rows.find((row) => row.id === null) ?? { exposures: 0, clicks: 0 };
    await producer.publish({ subject: 'events.recommendation.shown', id: 'evt_late_shown', payload: { ...rec, event_id: 'evt_late_shown', ad_id: 'ad_late' } });
    await producer.publish({ subject: 'events.recommendation.clicked', id: 'evt_late_click', payload: { ...rec, event_id: 'evt_late_click', ad_id: 'ad_late' } });
    const counted = await waitFor(
      async () => {
        const b = await json<ReportBreakdown>(path, keys.live);
        return unattributed(b).exposures === unattributed(before).exposures + 1 ? b : undefined;
      },
      { timeoutMs: 20000, intervalMs: 100, what: 'the late recommendation counted as unattributed' },
    );
    expect(unattributed(counted).clicks).toBe(unattributed(before).clicks + 1);
    expect(counted.rows.map((row) => row.id)).not.toContain('ad_late');
    await producer.publish({ subject: 'events.recommendation.generated', id: 'evt_late_gen', payload: { ...rec, event_id: 'evt_late_gen', ad_id: 'ad_late', product_id: 'prod_late' } });
    const moved = await waitFor(
      async () => {
        const b = await json<ReportBreakdown>(path, keys.live);
        return b.rows.some((row) => row.id === 'ad_late') ? b : undefined;
      },
      { timeoutMs: 20000, intervalMs: 100, what: 'the late recommendation moved to its ad' },
    );
    expect(moved.rows.find((row) => row.id === 'ad_late')).toEqual({ id: 'ad_late', exposures: 1, clicks: 1, engagements: 0, conversions: 0, earnings_micros: 0 });
    expect(unattributed(moved)).toMatchObject({ exposures: unattributed(before).exposures, clicks: unattributed(before).clicks });
    const { report, breakdown } = await atSameCutoff('/agent/reporting?time_range=1d', path, keys.live);
    expect(sums(breakdown)).toEqual(figures(report));
  });

  it('exports CSV as DESIGN §9 says: the unattributed row with an empty id, other last, equal to the JSON when parsed back', async () => {
    const { csv, breakdown } = await waitFor(
      async () => {
        const response = await ready('/agent/reporting/breakdown?time_range=7d&by=ad&limit=4&format=csv', keys.live);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${AGENT}-7d-by-ad.csv"`);
        const text = await response.text();
        const body = await json<ReportBreakdown>('/agent/reporting/breakdown?time_range=7d&by=ad&limit=4', keys.live);
        const parsed = parse(text, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
        return parsed.length === body.rows.length + 1 && Number(parsed[parsed.length - 1].exposures) === body.other.exposures ? { csv: text, breakdown: body } : undefined;
      },
      { timeoutMs: 10000, intervalMs: 50, what: 'CSV and JSON of one publication' },
    );
    expect(csv.startsWith('id,exposures,clicks,engagements,conversions,earnings_micros\r\n')).toBe(true);
    expect(csv.endsWith('\r\n')).toBe(true);
    const rows = parse(csv, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
    const numbers = rows.map(({ id, ...counts }) => ({ id, ...Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)])) }));
    expect(numbers).toEqual([
      ...breakdown.rows.map((row) => ({ ...row, id: row.id ?? '' })),
      { id: '(other)', ...breakdown.other },
    ]);
    // The unattributed row and a quoted id, whatever their rank: the whole list.
    const full = await (await ready('/agent/reporting/breakdown?time_range=7d&by=ad&limit=100&format=csv', keys.live)).text();
    expect(full).toMatch(/\r\n,\d+,/);
    expect(full).toContain('\r\n"ad,comma",');
    expect(full).toMatch(/\r\n\(other\),0,0,0,0,0\r\n$/);
  });
});

describe("the owner's /agent/dashboard/reporting/breakdown (ID token)", () => {
  it('answers exactly what the key route answers for a key of the chosen traffic (live by default)', async () => {
    for (const [query, traffic] of [['', 'live'], ['&traffic=live', 'live'], ['&traffic=test', 'test']] as const) {
      const same = await waitFor(
        async () => {
          const mine = await json<ReportBreakdown>(`/agent/dashboard/reporting/breakdown?time_range=7d&by=product&limit=5${query}`, owner);
          const keyed = await json<ReportBreakdown>('/agent/reporting/breakdown?time_range=7d&by=product&limit=5', keys[traffic]);
          return mine.processed_through === keyed.processed_through ? { mine, keyed } : undefined;
        },
        { timeoutMs: 10000, intervalMs: 50, what: 'the two breakdowns of one publication' },
      );
      expect(same.mine).toEqual(same.keyed);
      expect(same.mine.is_test).toBe(traffic === 'test');
    }
    const csv = await ready('/agent/dashboard/reporting/breakdown?time_range=7d&by=ad&traffic=test&format=csv', owner);
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="${AGENT}-7d-by-ad.csv"`);
  });
});

describe('checks: 401, 403, then 422', () => {
  it('answers 401 without a credential and to an API key on the owner route', async () => {
    await expectProblem(await get('/agent/reporting/breakdown?by=ad'), 401);
    await expectProblem(await get('/agent/dashboard/reporting/breakdown?by=ad', keys.live), 401);
    await expectProblem(await get('/agent/reporting/breakdown?by=bogus'), 401);
  });

  it('answers 403 for a suspended platform before looking at the query', async () => {
    await expectProblem(await get('/agent/reporting/breakdown?by=bogus', suspendedKey), 403, /account-unavailable$/);
    await expectProblem(await get('/agent/dashboard/reporting/breakdown?by=bogus', suspendedOwner), 403, /account-unavailable$/);
  });

  it.each([
    ['/agent/reporting/breakdown', /by is required: ad or product/],
    ['/agent/reporting/breakdown?by=campaign', /Unsupported by "campaign": ad or product/],
    ['/agent/reporting/breakdown?by=', /Unsupported by ""/],
    ['/agent/reporting/breakdown?by=ad&limit=0', /limit must be an integer from 1 to 100; got "0"/],
    ['/agent/reporting/breakdown?by=ad&limit=101', /limit must be an integer from 1 to 100/],
    ['/agent/reporting/breakdown?by=ad&limit=-1', /limit must be an integer from 1 to 100; got "-1"/],
    ['/agent/reporting/breakdown?by=ad&limit=2.5', /limit must be an integer from 1 to 100/],
    ['/agent/reporting/breakdown?by=ad&limit=', /limit must be an integer from 1 to 100/],
    ['/agent/reporting/breakdown?by=ad&sort=engagements', /Unsupported sort "engagements": exposures, clicks, conversions, earnings_micros/],
    ['/agent/reporting/breakdown?by=ad&format=xlsx', /Unsupported format "xlsx"/],
    ['/agent/reporting/breakdown?by=ad&time_range=2w', /Unsupported time_range "2w"/],
    ['/agent/reporting/breakdown?by=ad&by=product', /by must be given at most once/],
    ['/agent/reporting/breakdown?by=ad&limit=5&limit=5', /limit must be given at most once/],
    ['/agent/reporting/breakdown?by=ad&traffic=test', /Unsupported query parameter "traffic"/],
    ['/agent/reporting/breakdown?by=ad&granularity=day', /Unsupported query parameter "granularity"/],
  ])('key route %s → 422', async (path, detail) => {
    const response = await get(path, keys.live);
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 422, type: expect.stringMatching(/invalid-query$/), detail: expect.stringMatching(detail) });
  });

  it.each([
    ['/agent/dashboard/reporting/breakdown?by=ad&traffic=prod', /Unsupported traffic "prod": live or test/],
    ['/agent/dashboard/reporting/breakdown?by=ad&traffic=live&traffic=test', /traffic must be given at most once/],
    ['/agent/dashboard/reporting/breakdown?by=ad&agent_id=agent_other', /Unsupported query parameter "agent_id"/],
    ['/agent/dashboard/reporting/breakdown?traffic=test', /by is required/],
  ])('owner route %s → 422', async (path, detail) => {
    const response = await get(path, owner);
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ status: 422, type: expect.stringMatching(/invalid-query$/), detail: expect.stringMatching(detail) });
  });
});
