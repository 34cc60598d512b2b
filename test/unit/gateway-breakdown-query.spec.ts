import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { fastCheckOf } from '#libs/contracts';
import { BreakdownQueryDto, passesBreakdownQueryFastCheck } from '../../apps/gateway/src/reporting/breakdown-query.dto.js';
import { OwnerBreakdownQueryDto } from '../../apps/gateway/src/dashboard/dashboard-query.dto.js';

describe('the fast check of GET /agent/reporting/breakdown', () => {
  it('accepts only what the DTO accepts, with the value the DTO gives', () => {
    const value = fc.oneof(
      fc.constantFrom('today', '1d', '90d', 'all', 'ad', 'product', 'campaign', 'clicks', 'earnings_micros', 'engagements', 'json', 'csv', 'CSV', '', '20'),
      fc.string({ maxLength: 4 }),
      fc.array(fc.constant('ad'), { maxLength: 2 }),
    );
    const query = fc.dictionary(fc.constantFrom('time_range', 'by', 'sort', 'format', 'limit', 'traffic', 'BY', ''), value, { maxKeys: 5 });
    let accepted = 0;
    fc.assert(
      fc.property(query, (q) => {
        if (!passesBreakdownQueryFastCheck(q)) return;
        accepted++;
        const validated = plainToInstance(BreakdownQueryDto, q);
        expect(validateSync(validated, { whitelist: true, forbidNonWhitelisted: true })).toEqual([]);
        expect({ ...Object.assign(new BreakdownQueryDto(), q) }).toEqual({ ...validated });
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('is the API-key route’s check only: the owner route (traffic) keeps class-validator', () => {
    expect(fastCheckOf(BreakdownQueryDto)).toBe(passesBreakdownQueryFastCheck);
    expect(fastCheckOf(OwnerBreakdownQueryDto)).toBeUndefined();
    expect(passesBreakdownQueryFastCheck({ by: 'ad', limit: '20' })).toBe(false);
    expect(passesBreakdownQueryFastCheck({ time_range: '7d' })).toBe(false);
  });
});
