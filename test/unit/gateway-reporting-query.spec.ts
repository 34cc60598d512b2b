import { parseReportingQuery } from '../../apps/gateway/src/reporting/reporting-query.js';

describe('parseReportingQuery', () => {
  it.each([
    ['/agent/reporting', '30d'],
    ['/agent/reporting?', '30d'],
    ['/agent/reporting?time_range=today', 'today'],
    ['/agent/reporting?time_range=1d', '1d'],
    ['/agent/reporting?time_range=7d', '7d'],
    ['/agent/reporting?time_range=30d', '30d'],
    ['/agent/reporting?time_range=90d', '90d'],
    ['/agent/reporting?time_range=all', 'all'],
    ['/agent/reporting?time_range=%37d', '7d'],
    ['/agent/reporting?time%5Frange=all', 'all'],
    ['/agent/reporting?time_range=7d&', '7d'],
  ])('%s → %s', (url, timeRange) => {
    expect(parseReportingQuery(url)).toEqual({ ok: true, time_range: timeRange });
  });

  it.each([
    ['/agent/reporting?time_range=', /empty/],
    ['/agent/reporting?time_range', /empty/],
    ['/agent/reporting?time_range=1y', /Unsupported time_range/],
    ['/agent/reporting?time_range=7D', /Unsupported time_range/],
    ['/agent/reporting?time_range=%207d', /Unsupported time_range/],
    ['/agent/reporting?time_range=7d&time_range=7d', /at most once/],
    ['/agent/reporting?time_range=7d&time_range=1d', /at most once/],
    ['/agent/reporting?time_range=7d&agent_id=other', /Unsupported query parameter "agent_id"/],
    ['/agent/reporting?traffic=test', /Unsupported query parameter/],
    ['/agent/reporting?TIME_RANGE=7d', /Unsupported query parameter/],
    ['/agent/reporting?time_range[]=7d', /Unsupported query parameter/],
    ['/agent/reporting?start=2026-01-01', /Unsupported query parameter/],
    ['/agent/reporting?=7d', /Unsupported query parameter ""/],
    ['/agent/reporting?time_range=%ZZ', /percent-encoding/],
  ])('%s → 422', (url, detail) => {
    const result = parseReportingQuery(url);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).toMatch(detail);
  });
});
