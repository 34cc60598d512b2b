import fc from 'fast-check';
import { passesPayoutHistoryListRequestFastCheck, passesPayoutStatementsListRequestFastCheck } from '#libs/contracts';
import { HISTORY_PARAMETERS, NO_PARAMETERS, STATEMENTS_PARAMETERS, parsePayoutsQuery } from '../../apps/gateway/src/payouts/payouts-query.js';

describe('parsePayoutsQuery', () => {
  it.each([
    ['/agent-payouts/me/statements', {}],
    ['/agent-payouts/me/statements?', {}],
    ['/agent-payouts/me/statements?page=2&page_size=100&status=PAID', { page: 2, page_size: 100, status: 'PAID' }],
    ['/agent-payouts/me/statements?page_size=1', { page_size: 1 }],
    ['/agent-payouts/me/statements?page=007', { page: 7 }],
    ['/agent-payouts/me/statements?page=9007199254740991', { page: Number.MAX_SAFE_INTEGER }],
    ['/agent-payouts/me/statements?&&status=%42LOCKED&', { status: 'BLOCKED' }],
    ['/agent-payouts/me/statements?page%5Fsize=5#page=0', { page_size: 5 }],
  ])('%s', (url, query) => {
    expect(parsePayoutsQuery(url, STATEMENTS_PARAMETERS)).toEqual({ ok: true, query });
  });

  it.each([
    ['?page=9007199254740992', /page must be an integer ≥ 1/],
    ['?page=+1', /page must be/],
    ['?page_size=1%2E0', /page_size must be an integer from 1 to 100/],
    ['?status=Paid', /Unsupported status "Paid"\. Allowed values of status: LOCKED, BLOCKED, FAILED, PAID\./],
    ['?agent_id=agent_other', /Unsupported query parameter "agent_id": supported parameters: page, page_size, status\./],
    [`?${'n'.repeat(500)}=1`, /"n{64}…"/],
  ])('refuses %s', (query, detail) => {
    const result = parsePayoutsQuery(`/agent-payouts/me/statements${query}`, STATEMENTS_PARAMETERS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).toMatch(detail);
  });

  it('takes no parameter where none is allowed, and no status on history', () => {
    expect(parsePayoutsQuery('/agent-payouts/me/balance?page=1', NO_PARAMETERS)).toEqual({
      ok: false,
      detail: 'Unsupported query parameter "page": this endpoint takes no query parameters.',
    });
    expect(parsePayoutsQuery('/agent-payouts/me/balance', NO_PARAMETERS)).toEqual({ ok: true, query: {} });
    expect(parsePayoutsQuery('/agent-payouts/me/history?status=PAID', HISTORY_PARAMETERS).ok).toBe(false);
  });

  // The gateway refuses with 422 exactly what payouts-read would refuse (so a valid query never
  // meets an invalid_request, and nothing invalid reaches the service).
  const value = fc.oneof(
    fc.constantFrom('', '0', '1', '01', '20', '100', '101', '-1', '1.5', '1e2', 'abc', 'PAID', 'paid', 'LOCKED', 'OPEN', '9007199254740991', '9007199254740992'),
    fc.integer({ min: -5, max: 200 }).map(String),
    fc.string({ maxLength: 4 }),
  );
  const name = fc.constantFrom('page', 'page_size', 'status', 'sort');

  it.each([
    ['statements', STATEMENTS_PARAMETERS, passesPayoutStatementsListRequestFastCheck],
    ['history', HISTORY_PARAMETERS, passesPayoutHistoryListRequestFastCheck],
  ] as const)('agrees with the payouts-read request validation of %s', (_what, allowed, service) => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, maxLength: 4 }), (pairs) => {
        const url = `/x?${pairs.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('&')}`;
        const parsed = parsePayoutsQuery(url, allowed);
        const request = { agent_id: 'agent_1', ...Object.fromEntries(pairs) };
        expect(parsed.ok).toBe(service(request));
        if (parsed.ok) expect(service({ agent_id: 'agent_1', ...parsed.query })).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
