import fc from 'fast-check';
import { passesPayoutHistoryListRequestFastCheck, passesPayoutStatementsListRequestFastCheck } from '#libs/contracts';
import { NoQueryDto } from '../../apps/gateway/src/http/no-query.dto.js';
import { PayoutHistoryQueryDto, PayoutStatementsQueryDto } from '../../apps/gateway/src/payouts/payouts-query.dto.js';
import { validateQuery } from '../support/http-input.js';

describe('the queries of GET /agent-payouts/me/* (RawInputGuard, then the query DTOs)', () => {
  it.each([
    ['/agent-payouts/me/statements', {}],
    ['/agent-payouts/me/statements?', {}],
    ['/agent-payouts/me/statements?page=2&page_size=100&status=PAID', { page: 2, page_size: 100, status: 'PAID' }],
    ['/agent-payouts/me/statements?page_size=1', { page_size: 1 }],
    ['/agent-payouts/me/statements?page=007', { page: 7 }],
    ['/agent-payouts/me/statements?page=10000', { page: 10_000 }],
    ['/agent-payouts/me/statements?page=0010000', { page: 10_000 }],
    ['/agent-payouts/me/statements?&&status=%42LOCKED&', { status: 'BLOCKED' }],
    ['/agent-payouts/me/statements?page%5Fsize=5#page=0', { page_size: 5 }],
  ])('%s', async (url, query) => {
    expect(await validateQuery(url, PayoutStatementsQueryDto)).toEqual({ ok: true, value: query });
  });

  it.each([
    ['?page=10001', /page must be an integer from 1 to 10000; got "10001"/],
    ['?page=9007199254740991', /page must be an integer from 1 to 10000/],
    ['?page=0', /page must be an integer from 1 to 10000/],
    ['?page=+1', /page must be/],
    ['?page_size=1%2E0', /page_size must be an integer from 1 to 100/],
    ['?status=Paid', /Unsupported status "Paid"\. Allowed values of status: LOCKED, BLOCKED, FAILED, PAID\./],
    ['?agent_id=agent_other', /Unsupported query parameter "agent_id": supported parameters: page, page_size, status\./],
    [`?${'n'.repeat(500)}=1`, /"n{64}…"/],
  ])('refuses %s', async (query, detail) => {
    const result = await validateQuery(`/agent-payouts/me/statements${query}`, PayoutStatementsQueryDto);
    expect(result).toMatchObject({ ok: false, slug: 'invalid-query' });
    if (!result.ok) expect(result.detail).toMatch(detail);
  });

  it('takes no parameter where none is allowed, and no status on history', async () => {
    expect(await validateQuery('/agent-payouts/me/balance?page=1', NoQueryDto)).toEqual({
      ok: false,
      slug: 'invalid-query',
      detail: 'Unsupported query parameter "page": this endpoint takes no query parameters.',
    });
    expect(await validateQuery('/agent-payouts/me/balance', NoQueryDto)).toEqual({ ok: true, value: {} });
    expect((await validateQuery('/agent-payouts/me/history?status=PAID', PayoutHistoryQueryDto)).ok).toBe(false);
  });

  // The gateway refuses with 422 exactly what payouts-read would refuse (so a valid query never
  // meets an invalid_request, and nothing invalid reaches the service).
  const value = fc.oneof(
    fc.constantFrom('', '0', '1', '01', '20', '100', '101', '-1', '1.5', '1e2', 'abc', 'PAID', 'paid', 'LOCKED', 'OPEN', '9999', '10000', '10001', '9007199254740991', '9007199254740992'),
    fc.integer({ min: -5, max: 200 }).map(String),
    fc.string({ maxLength: 4 }),
  );
  const name = fc.constantFrom('page', 'page_size', 'status', 'sort');

  it.each([
    ['statements', PayoutStatementsQueryDto, passesPayoutStatementsListRequestFastCheck],
    ['history', PayoutHistoryQueryDto, passesPayoutHistoryListRequestFastCheck],
  ] as const)('agrees with the payouts-read request validation of %s', async (_what, dto, service) => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, maxLength: 4 }), async (pairs) => {
        const url = `/x?${pairs.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('&')}`;
        const parsed = await validateQuery(url, dto);
        const request = { agent_id: 'agent_1', ...Object.fromEntries(pairs) };
        expect(parsed.ok).toBe(service(request));
        if (parsed.ok) expect(service({ agent_id: 'agent_1', ...parsed.value })).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
