import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  PayoutBalanceEventDto,
  PayoutHistoryListRequestDto,
  PayoutReadinessEventDto,
  PayoutStatementEventDto,
  PayoutStatementGetRequestDto,
  PayoutStatementsListRequestDto,
  PayoutsAgentRequestDto,
  fastCheckOf,
  pageOf,
  passesPayoutHistoryListRequestFastCheck,
  passesPayoutStatementGetRequestFastCheck,
  passesPayoutStatementsListRequestFastCheck,
  passesPayoutsAgentRequestFastCheck,
} from '#libs/contracts';

/**
 * The payouts request pre-checks may skip class-validator only because they never accept what
 * the DTOs (validated as RpcValidationPipe does: whitelist, forbidNonWhitelisted) reject.
 */
const accepts = (dto: new () => object, payload: unknown, forbidUnknown = true) =>
  typeof payload === 'object' &&
  payload !== null &&
  !Array.isArray(payload) &&
  validateSync(plainToInstance(dto, payload), forbidUnknown ? { whitelist: true, forbidNonWhitelisted: true } : {}).length === 0;

const id = fc.oneof(
  fc.string({ minLength: 0, maxLength: 3 }),
  fc.string({ minLength: 1, maxLength: 20 }),
  fc.constantFrom('x'.repeat(200), 'x'.repeat(201), '\uFE0F', '\uFE0E\uFE0F', '\uD83D\uDE00'),
);
const pageValue = fc.oneof(
  fc.integer({ min: -5, max: 150 }),
  fc.constantFrom(1.5, 2 ** 53, Number.MAX_SAFE_INTEGER, '1', '20', '100', '101', '0', '01', '1.0', '1e2', '', ' 1', '-1', 'abc'),
);
const anything = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.string(), fc.array(fc.integer(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: anything });
const request = fc.record(
  {
    agent_id: maybe(id),
    statement_id: maybe(id),
    page: maybe(pageValue),
    page_size: maybe(pageValue),
    status: maybe(fc.constantFrom('LOCKED', 'BLOCKED', 'FAILED', 'PAID', 'paid', 'OPEN')),
    extra: anything,
  },
  { requiredKeys: [] },
);

describe('payouts request fast checks accept only what the DTOs accept', () => {
  const pairs: [string, (v: unknown) => boolean, new () => object][] = [
    ['agent', passesPayoutsAgentRequestFastCheck, PayoutsAgentRequestDto],
    ['history', passesPayoutHistoryListRequestFastCheck, PayoutHistoryListRequestDto],
    ['statements', passesPayoutStatementsListRequestFastCheck, PayoutStatementsListRequestDto],
    ['statement', passesPayoutStatementGetRequestFastCheck, PayoutStatementGetRequestDto],
  ];

  it.each(pairs)('%s', (_name, fastCheck, dto) => {
    fc.assert(
      fc.property(fc.oneof(request, anything), (payload) => {
        const plain = payload && typeof payload === 'object' ? JSON.parse(JSON.stringify(payload)) : payload;
        if (fastCheck(plain)) expect(accepts(dto, plain)).toBe(true);
      }),
      { numRuns: 4000 },
    );
  });

  it.each(pairs)('%s: the DTO carries its check (@FastCheck), so the RPC validation pipe uses it', (_name, fastCheck, dto) => {
    expect(fastCheckOf(dto)).toBe(fastCheck);
  });

  it('accepts the normal requests', () => {
    expect(passesPayoutsAgentRequestFastCheck({ agent_id: 'agent_a' })).toBe(true);
    expect(passesPayoutHistoryListRequestFastCheck({ agent_id: 'agent_a', page: 3, page_size: 100 })).toBe(true);
    expect(passesPayoutStatementsListRequestFastCheck({ agent_id: 'agent_a', page: '2', page_size: '50', status: 'PAID' })).toBe(true);
    expect(passesPayoutStatementsListRequestFastCheck({ agent_id: 'agent_a' })).toBe(true);
    expect(passesPayoutStatementGetRequestFastCheck({ agent_id: 'agent_a', statement_id: 'st_1' })).toBe(true);
    expect(passesPayoutStatementsListRequestFastCheck({ agent_id: 'agent_a', page_size: 101 })).toBe(false);
    expect(passesPayoutsAgentRequestFastCheck({ agent_id: 'agent_a', page: 1 })).toBe(false);
  });

  it('applies the defaults page 1, page_size 20', () => {
    expect(pageOf({})).toEqual({ page: 1, pageSize: 20 });
    expect(pageOf({ page: '3', page_size: 7 })).toEqual({ page: 3, pageSize: 7 });
  });
});

describe('payout event DTOs (DESIGN §4)', () => {
  const statement = {
    statement_id: 'st_1', agent_id: 'agent_a', period_start: '2026-10-01T00:00:00Z', period_end: '2026-11-01T00:00:00Z',
    currency: 'USD', status: 'PAID', gross_earnings_micros: 10_000_000, service_fee_micros: 1_000_000, net_earnings_micros: 9_000_000,
    blocked_reason: null, failure: null,
    transfer: {
      transfer_reference: 'tr_1', status: 'settled', initiated_at: '2026-11-02T00:00:00Z', settled_at: '2026-11-04T00:00:00Z',
      source_currency: 'USD', source_amount_micros: 9_000_000, target_currency: 'EUR', amount_received_micros: 8_200_000,
      fee_micros: 150_000, exchange_rate: '0.9277',
    },
    created_at: '2026-11-01T00:00:00Z', updated_at: '2026-11-04T00:00:00Z', version: 3,
  };
  const readiness = {
    agent_id: 'agent_a', setup_status: 'in_progress', missing_fields: ['tax_id'], thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
    blocked_reason: null, updated_at: '2026-11-01T00:00:00Z', version: 1,
  };
  const balance = { agent_id: 'a', currency: 'USD', pending_micros: 1, available_micros: 2, locked_micros: 3, paid_out_micros: -4, updated_at: '2026-11-01T00:00:00Z', version: 0 };

  it('accepts the documented payloads, with nullable fields null or absent', () => {
    expect(accepts(PayoutStatementEventDto, statement, false)).toBe(true);
    const { transfer: _t, failure: _f, blocked_reason: _b, gross_earnings_micros: _g, ...minimal } = statement;
    expect(accepts(PayoutStatementEventDto, minimal, false)).toBe(true);
    expect(accepts(PayoutStatementEventDto, { ...statement, transfer: { transfer_reference: 'tr', status: 'initiated', source_currency: 'USD' } }, false)).toBe(true);
    expect(accepts(PayoutStatementEventDto, { ...statement, transfer: { ...statement.transfer, exchange_rate: 0.92 } }, false)).toBe(true);
    expect(accepts(PayoutReadinessEventDto, readiness, false)).toBe(true);
    expect(accepts(PayoutBalanceEventDto, balance, false)).toBe(true);
  });

  it.each([
    ['statement status', PayoutStatementEventDto, { ...statement, status: 'OPEN' }],
    ['statement failure array', PayoutStatementEventDto, { ...statement, failure: [{ code: 'x', message: 'y' }] }],
    ['statement failure without code', PayoutStatementEventDto, { ...statement, failure: { message: 'y' } }],
    ['transfer not an object', PayoutStatementEventDto, { ...statement, transfer: 'tr_1' }],
    ['transfer exchange rate', PayoutStatementEventDto, { ...statement, transfer: { ...statement.transfer, exchange_rate: -1 } }],
    ['transfer received float', PayoutStatementEventDto, { ...statement, transfer: { ...statement.transfer, amount_received_micros: 1.5 } }],
    ['statement version', PayoutStatementEventDto, { ...statement, version: '3' }],
    ['statement timestamp offset', PayoutStatementEventDto, { ...statement, period_start: '2026-10-01T00:00:00+02:00' }],
    ['readiness setup status', PayoutReadinessEventDto, { ...readiness, setup_status: 'done' }],
    ['readiness threshold', PayoutReadinessEventDto, { ...readiness, thresholds: [{ currency: 'usd', minimum_payout_micros: 1 }] }],
    ['readiness threshold not object', PayoutReadinessEventDto, { ...readiness, thresholds: [5] }],
    ['balance currency', PayoutBalanceEventDto, { ...balance, currency: null }],
    ['balance micros beyond 2^53', PayoutBalanceEventDto, { ...balance, locked_micros: 2 ** 53 }],
    ['balance negative version', PayoutBalanceEventDto, { ...balance, version: -1 }],
  ])('rejects %s', (_name, dto, payload) => {
    expect(accepts(dto as new () => object, payload, false)).toBe(false);
  });
});

describe('payout event DTO reasons name the nested field', () => {
  const reasons = (dto: new () => object, payload: object) =>
    validateSync(plainToInstance(dto, payload)).flatMap((e) => Object.values(e.constraints ?? {})).join('; ');
  const base = {
    statement_id: 's', agent_id: 'a', period_start: '2026-10-01T00:00:00Z', period_end: '2026-11-01T00:00:00Z', currency: 'USD',
    status: 'PAID', created_at: '2026-11-01T00:00:00Z', updated_at: '2026-11-01T00:00:00Z', version: 1,
  };

  it('reports transfer.<field>, failure as not an object, and thresholds[i].<field>', () => {
    expect(reasons(PayoutStatementEventDto, { ...base, transfer: { transfer_reference: 't', status: 's', source_currency: 'usd' } })).toMatch(
      /^transfer\.source_currency must be an ISO 4217 code/,
    );
    expect(reasons(PayoutStatementEventDto, { ...base, failure: 'boom' })).toBe('failure must be an object');
    expect(
      reasons(PayoutReadinessEventDto, { agent_id: 'a', setup_status: 'complete', missing_fields: [], thresholds: [{ currency: 'USD' }], updated_at: base.updated_at, version: 1 }),
    ).toMatch(/^thresholds\[0\]\.minimum_payout_micros must be an integer/);
  });
});
