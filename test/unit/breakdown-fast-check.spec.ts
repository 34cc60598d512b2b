import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { BreakdownRequestDto, fastCheckOf, passesBreakdownRequestFastCheck } from '#libs/contracts';

/** The breakdown request's hot-path check never accepts what class-validator (unknown fields refused, as the RPC server does) rejects, and accepts the valid shape. */
const classValidatorAccepts = (payload: unknown) =>
  typeof payload === 'object' &&
  payload !== null &&
  !Array.isArray(payload) &&
  validateSync(plainToInstance(BreakdownRequestDto, payload), { whitelist: true, forbidNonWhitelisted: true }).length === 0;

const anything = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.string(), fc.array(fc.integer(), { maxLength: 2 }));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: anything });
const request = fc.record(
  {
    agent_id: maybe(fc.oneof(fc.string({ maxLength: 3 }), fc.constant('x'.repeat(201)))),
    traffic: maybe(fc.constantFrom('live', 'test', 'prod')),
    time_range: maybe(fc.constantFrom('today', '1d', '7d', '30d', '90d', 'all', '2d')),
    by: maybe(fc.constantFrom('ad', 'product', 'campaign')),
    limit: maybe(fc.oneof(fc.integer({ min: -1, max: 102 }), fc.constantFrom(1.5, '20', Number.NaN))),
    sort: maybe(fc.constantFrom('exposures', 'clicks', 'conversions', 'earnings_micros', 'engagements')),
    extra: fc.string(),
  },
  { requiredKeys: [] },
);

describe('breakdown request fast check', () => {
  it('never accepts what class-validator rejects', () => {
    fc.assert(
      fc.property(fc.oneof(request, anything), (payload) => {
        if (passesBreakdownRequestFastCheck(payload)) expect(classValidatorAccepts(payload)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('accepts the valid shape and is the DTO’s check', () => {
    const valid = { agent_id: 'agent_1', traffic: 'live', time_range: '90d', by: 'ad', limit: 100, sort: 'clicks' };
    expect(passesBreakdownRequestFastCheck(valid)).toBe(true);
    expect(classValidatorAccepts(valid)).toBe(true);
    expect(passesBreakdownRequestFastCheck({ ...valid, limit: 101 })).toBe(false);
    expect(passesBreakdownRequestFastCheck({ ...valid, extra: 1 })).toBe(false);
    expect(fastCheckOf(BreakdownRequestDto)).toBe(passesBreakdownRequestFastCheck);
  });
});
