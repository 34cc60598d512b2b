import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { ReportQueryDto, passesReportQueryFastCheck } from '../../apps/gateway/src/reporting/report-query.dto.js';
import { validateQuery } from '../support/http-input.js';

describe('the query of GET /agent/reporting (RawInputGuard, then ReportQueryDto)', () => {
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
  ])('%s → %s', async (url, timeRange) => {
    expect(await validateQuery(url, ReportQueryDto)).toEqual({ ok: true, value: { time_range: timeRange } });
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
  ])('%s → 422', async (url, detail) => {
    const result = await validateQuery(url, ReportQueryDto);
    expect(result).toMatchObject({ ok: false, slug: 'invalid-query' });
    if (!result.ok) expect(result.detail).toMatch(detail);
  });

  it('words the reasons as the API reference shows them', async () => {
    expect(await validateQuery('/agent/reporting?time_range=2w', ReportQueryDto)).toMatchObject({
      detail: 'Unsupported time_range "2w". Allowed values of time_range: today, 1d, 7d, 30d, 90d, all.',
    });
    expect(await validateQuery('/agent/reporting?agent_id=x', ReportQueryDto)).toMatchObject({
      detail: 'Unsupported query parameter "agent_id": time_range is the only supported parameter.',
    });
  });

  it('has a fast check that accepts only what the DTO accepts', () => {
    const value = fc.oneof(fc.constantFrom('today', '1d', '7d', '30d', '90d', 'all', '', '7D', 'x'), fc.string({ maxLength: 4 }), fc.array(fc.constant('7d'), { maxLength: 2 }));
    const query = fc.dictionary(fc.constantFrom('time_range', 'agent_id', '', 'TIME_RANGE'), value, { maxKeys: 3 });
    let accepted = 0;
    fc.assert(
      fc.property(query, (q) => {
        if (!passesReportQueryFastCheck(q)) return;
        accepted++;
        expect(validateSync(plainToInstance(ReportQueryDto, q), { whitelist: true, forbidNonWhitelisted: true })).toEqual([]);
      }),
      { numRuns: 2000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});
