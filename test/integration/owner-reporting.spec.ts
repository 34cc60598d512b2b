import { parse } from 'csv-parse/sync';
import { SERIES_FIGURES, type Report, type ReportSeries } from '#libs/contracts';
import {
  connectStackProducer,
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
 * Report series and the owner's reporting over real HTTP (DESIGN §7): the gateway with a real
 * JWKS server, NATS request/reply to the real reporting-projection, events published through
 * JetStream, the platform's zone set by a settings.timezone.changed event (Asia/Kathmandu, whose
 * days start at 18:15 UTC). Series sum to the report with the same processed_through; the
 * owner's routes answer what the key routes answer for that traffic; CSV parsed back by
 * csv-parse equals the JSON; every refused parameter is a 422.
 */

const AGENT = 'agent_series';
const ZONE = 'Asia/Kathmandu';
const stack = useTestStack();
let base: string;
let producer: Producer;
let keys: Record<'live' | 'test', string>;
let owner: string;
/** Recommendations published per traffic (each shown; every third clicked, with an entry of 1.5 USD). */
const published = { live: 0, test: 0 };

beforeAll(async () => {
  const { jwks, key } = await startIdentityProvider(stack);
  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 300 }));
  ({ base } = await startGateway(stack, { jwksUrl: jwks.url }));
  keys = (await seedPlatform(stack, AGENT, { owner: 'uid_series', keys: ['live', 'test'] })).keys;
  owner = await signIdToken(key, { sub: 'uid_series' });

  producer = await connectStackProducer(stack);
  await producer.publishRaw(
    'settings.timezone.changed',
    JSON.stringify({ agent_id: AGENT, reporting_timezone: ZONE, updated_at: new Date().toISOString(), event_id: 'tz_series_1' }),
    'tz_series_1',
  );
  // Three days of activity, a recommendation every 37 minutes, live and test alternating.
  const now = Date.now();
  for (let i = 0, t = now - 3 * 86_400_000; t < now - 120_000; i++, t += 37 * 60_000) {
    const traffic = i % 2 ? 'test' : 'live';
    const created = new Date(t).toISOString();
    const base = { recommendation_id: `rec_s_${i}`, agent_id: AGENT, traffic, recommendation_created_at: created, occurred_at: created };
    await producer.publish({ subject: 'events.recommendation.shown', id: `evt_shown_${i}`, payload: { ...base, event_id: `evt_shown_${i}`, billable: false } });
    if (i % 3 === 0) {
      await producer.publish({ subject: 'events.recommendation.clicked', id: `evt_click_${i}`, payload: { ...base, event_id: `evt_click_${i}`, billable: true } });
      await producer.publish({
        subject: 'events.accounting.entry',
        id: `acc_${i}`,
        payload: { entry_id: `acc_${i}`, agent_id: AGENT, traffic, recommendation_id: `rec_s_${i}`, amount_micros: 1_500_000, currency: 'USD', recorded_at: created },
      });
    }
    published[traffic] += 1;
  }
  // Every event applied and published, in the platform's zone.
  await waitFor(
    async () => {
      const response = await get('/agent/reporting?time_range=7d', keys.live);
      if (response.status !== 200) return false;
      const body = (await response.json()) as Report;
      return body.exposures === published.live && body.timezone === ZONE;
    },
    { timeoutMs: 30000, intervalMs: 200, what: 'the live 7d report of every event' },
  );
});

function get(path: string, credential: string): Promise<Response> {
  return fetch(`${base}${path}`, { headers: { authorization: `Bearer ${credential}` } });
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

/** A report and a series read at the same processed_through (a publication may fall between two requests). */
async function atSameCutoff(reportPath: string, seriesPath: string, credential: string): Promise<{ report: Report; series: ReportSeries }> {
  return waitFor(
    async () => {
      const report = await json<Report>(reportPath, credential);
      const series = await json<ReportSeries>(seriesPath, credential);
      return report.processed_through === series.processed_through ? { report, series } : undefined;
    },
    { timeoutMs: 10000, intervalMs: 50, what: 'a report and a series at one processed_through' },
  );
}

function expectConsecutive(series: ReportSeries): void {
  if (series.buckets.length === 0) return;
  if (series.start_at !== null) expect(series.buckets[0].start_at).toBe(series.start_at);
  expect(series.buckets[series.buckets.length - 1].end_at).toBe(series.end_at);
  series.buckets.forEach((bucket, i) => {
    expect(Date.parse(bucket.start_at)).toBeLessThan(Date.parse(bucket.end_at));
    if (i > 0) expect(bucket.start_at).toBe(series.buckets[i - 1].end_at);
  });
}

const sums = (series: ReportSeries) => Object.fromEntries(SERIES_FIGURES.map((name) => [name, series.buckets.reduce((sum, b) => sum + b[name], 0)]));
const figures = (report: Report) => Object.fromEntries(SERIES_FIGURES.map((name) => [name, report[name]]));

describe('GET /agent/reporting/series (API key)', () => {
  it.each([
    ['today', 'hour'],
    ['1d', 'hour'],
    ['7d', 'hour'],
    ['7d', 'day'],
    ['30d', 'day'],
    ['90d', 'day'],
    ['all', 'day'],
  ])('%s by %s: buckets at Kathmandu edges, consecutive, summing to the report of the same processed_through', async (range, granularity) => {
    for (const traffic of ['live', 'test'] as const) {
      const { report, series } = await atSameCutoff(`/agent/reporting?time_range=${range}`, `/agent/reporting/series?time_range=${range}&granularity=${granularity}`, keys[traffic]);
      expect(Object.keys(series)).toEqual(['agent_id', 'time_range', 'granularity', 'timezone', 'is_test', 'start_at', 'end_at', 'processed_through', 'status', 'currency', 'buckets']);
      expect(series).toMatchObject({ agent_id: AGENT, time_range: range, granularity, timezone: ZONE, is_test: traffic === 'test', end_at: report.end_at, status: 'ready', currency: 'USD' });
      expect(series.start_at).toBe(report.start_at);
      expectConsecutive(series);
      expect(sums(series)).toEqual(figures(report));
      // Inner edges are Kathmandu's local midnights (18:15 UTC) or hour starts (:15).
      for (const bucket of series.buckets.slice(1)) expect(bucket.start_at).toMatch(granularity === 'day' ? /T18:15:00\.000Z$/ : /:15:00\.000Z$/);
      if (range === 'all') {
        expect(series.start_at).toBeNull();
        expect(series.buckets[0].start_at).toMatch(/T18:15:00\.000Z$/);
        expect(report.exposures).toBe(published[traffic]);
      }
    }
  });

  it('follows every publication: a late event of an old recommendation moves the series with its report (the gateway keeps no older series)', async () => {
    const path = '/agent/reporting/series?time_range=7d&granularity=day';
    const before = await atSameCutoff('/agent/reporting?time_range=7d', path, keys.live);
    // A click for a live recommendation of two days ago, and a new recommendation shown an hour ago.
    const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const recent = new Date(Date.now() - 3_600_000).toISOString();
    await producer.publish({
      subject: 'events.recommendation.clicked',
      id: 'evt_late_click',
      payload: { event_id: 'evt_late_click', recommendation_id: 'rec_late', agent_id: AGENT, traffic: 'live', recommendation_created_at: old, occurred_at: new Date().toISOString(), billable: false },
    });
    await producer.publish({
      subject: 'events.recommendation.shown',
      id: 'evt_late_shown',
      payload: { event_id: 'evt_late_shown', recommendation_id: 'rec_late_2', agent_id: AGENT, traffic: 'live', recommendation_created_at: recent, occurred_at: recent, billable: false },
    });
    published.live += 2;
    const after = await waitFor(
      async () => {
        const pair = await atSameCutoff('/agent/reporting?time_range=7d', path, keys.live);
        return pair.report.exposures === before.report.exposures + 2 ? pair : undefined;
      },
      { timeoutMs: 20000, intervalMs: 100, what: 'the report and series with the late events' },
    );
    expect(sums(after.series)).toEqual(figures(after.report));
    expect(after.report.clicks).toBe(before.report.clicks + 1);
  });

  it('defaults granularity to hour for today and 1d and to day otherwise, and time_range to 30d', async () => {
    expect((await json<ReportSeries>('/agent/reporting/series?time_range=today', keys.live)).granularity).toBe('hour');
    expect((await json<ReportSeries>('/agent/reporting/series?time_range=1d', keys.live)).granularity).toBe('hour');
    expect((await json<ReportSeries>('/agent/reporting/series?time_range=7d', keys.live)).granularity).toBe('day');
    expect(await json<ReportSeries>('/agent/reporting/series', keys.live)).toMatchObject({ time_range: '30d', granularity: 'day' });
  });

  it('exports CSV exactly as DESIGN §7 says, equal to the JSON when parsed back', async () => {
    for (const [range, granularity] of [['7d', 'hour'], ['90d', 'day'], ['all', 'day']]) {
      const { csv, series } = await waitFor(
        async () => {
          const response = await ready(`/agent/reporting/series?time_range=${range}&granularity=${granularity}&format=csv`, keys.test);
          expect(response.status).toBe(200);
          expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
          expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${AGENT}-${range}-${granularity}.csv"`);
          const text = await response.text();
          const json = await (await get(`/agent/reporting/series?time_range=${range}&granularity=${granularity}`, keys.test)).json();
          // The same publication: compare only when no cycle fell between the two requests.
          return text.split('\r\n').length - 2 === (json as ReportSeries).buckets.length ? { csv: text, series: json as ReportSeries } : undefined;
        },
        { timeoutMs: 10000, intervalMs: 50, what: 'CSV and JSON of one publication' },
      );
      expect(csv.startsWith('bucket_start,bucket_end,exposures,clicks,engagements,conversions,earnings_micros\r\n')).toBe(true);
      expect(csv.endsWith('\r\n')).toBe(true);
      const rows = parse(csv, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
      const numbers = rows.map(({ bucket_start, bucket_end, ...counts }) => ({ bucket_start, bucket_end, ...Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)])) }));
      expect(numbers).toEqual(series.buckets.map(({ start_at, end_at, ...counts }) => ({ bucket_start: start_at, bucket_end: end_at, ...counts })));
      expect(rows.every((row) => SERIES_FIGURES.every((name) => /^-?\d+$/.test(row[name])))).toBe(true);
      expect(rows.length).toBeGreaterThan(0);
    }
  });
});

describe("the owner's /agent/dashboard/reporting[/series] (ID token)", () => {
  it('answers exactly what the key routes answer for a key of the chosen traffic (live by default)', async () => {
    for (const [query, traffic] of [['', 'live'], ['&traffic=live', 'live'], ['&traffic=test', 'test']] as const) {
      for (const range of ['today', '7d', 'all']) {
        const same = await waitFor(
          async () => {
            const mine = await json<Report>(`/agent/dashboard/reporting?time_range=${range}${query}`, owner);
            const keyed = await json<Report>(`/agent/reporting?time_range=${range}`, keys[traffic]);
            return mine.updated_at === keyed.updated_at ? { mine, keyed } : undefined;
          },
          { timeoutMs: 10000, intervalMs: 50, what: 'the two reports of one publication' },
        );
        expect(same.mine).toEqual(same.keyed);
        const series = await waitFor(
          async () => {
            const mine = await json<ReportSeries>(`/agent/dashboard/reporting/series?time_range=${range}&granularity=day${query}`, owner);
            const keyed = await json<ReportSeries>(`/agent/reporting/series?time_range=${range}&granularity=day`, keys[traffic]);
            return mine.processed_through === keyed.processed_through && JSON.stringify(mine.buckets) === JSON.stringify(keyed.buckets) ? { mine, keyed } : undefined;
          },
          { timeoutMs: 10000, intervalMs: 50, what: 'the two series of one publication' },
        );
        expect(series.mine).toEqual(series.keyed);
      }
    }
  });

  it('exports the CSV of the chosen traffic', async () => {
    const response = await ready('/agent/dashboard/reporting/series?time_range=7d&granularity=day&traffic=test&format=csv', owner);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${AGENT}-7d-day.csv"`);
    const rows = parse(await response.text(), { columns: true }) as Record<string, string>[];
    expect(rows.reduce((sum, row) => sum + Number(row.exposures), 0)).toBeGreaterThan(0);
  });
});

describe('refused parameters', () => {
  it.each([
    ['/agent/reporting/series?time_range=30d&granularity=hour', /granularity hour is available for time_range today, 1d, 7d only; use day for 30d/],
    ['/agent/reporting/series?time_range=90d&granularity=hour', /use day for 90d/],
    ['/agent/reporting/series?time_range=all&granularity=hour', /use day for all/],
    ['/agent/reporting/series?granularity=hour', /use day for 30d/],
    ['/agent/reporting/series?time_range=7d&granularity=week', /Unsupported granularity "week"/],
    ['/agent/reporting/series?time_range=7d&granularity=', /Unsupported granularity ""/],
    ['/agent/reporting/series?time_range=7d&format=xlsx', /Unsupported format "xlsx"/],
    ['/agent/reporting/series?time_range=2w', /Unsupported time_range "2w"/],
    ['/agent/reporting/series?time_range=7d&time_range=30d', /time_range must be given at most once/],
    ['/agent/reporting/series?time_range=7d&granularity=day&granularity=day', /granularity must be given at most once/],
    ['/agent/reporting/series?time_range=7d&traffic=test', /Unsupported query parameter "traffic"/],
    ['/agent/reporting?time_range=7d&traffic=test', /Unsupported query parameter "traffic"/],
  ])('key route %s → 422', async (path, detail) => {
    const response = await get(path, keys.live);
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 422, type: expect.stringMatching(/invalid-query$/), detail: expect.stringMatching(detail) });
  });

  it.each([
    ['/agent/dashboard/reporting?traffic=prod', /Unsupported traffic "prod": live or test/],
    ['/agent/dashboard/reporting?traffic=live&traffic=test', /traffic must be given at most once/],
    ['/agent/dashboard/reporting?time_range=7d&agent_id=agent_other', /Unsupported query parameter "agent_id"/],
    ['/agent/dashboard/reporting?granularity=day', /Unsupported query parameter "granularity"/],
    ['/agent/dashboard/reporting/series?time_range=all&granularity=hour&traffic=test', /use day for all/],
    ['/agent/dashboard/reporting/series?traffic=', /Unsupported traffic ""/],
    ['/agent/dashboard/reporting/series?time_range=7d&agent_id=agent_other', /Unsupported query parameter "agent_id"/],
  ])('owner route %s → 422', async (path, detail) => {
    const response = await get(path, owner);
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ status: 422, type: expect.stringMatching(/invalid-query$/), detail: expect.stringMatching(detail) });
  });
});
