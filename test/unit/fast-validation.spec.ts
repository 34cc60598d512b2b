import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  AccountingEntryDto,
  RecommendationEventDto,
  ReportRequestDto,
  fastCheckOf,
  passesAccountingEntryFastCheck,
  passesRecommendationEventFastCheck,
  passesReportRequestFastCheck,
} from '#libs/contracts';

/**
 * The hot-path checks may skip class-validator only because they never accept what it
 * rejects. Random payloads near the valid shape (and far from it) hold them to that, and the
 * valid shapes show they do accept the normal case.
 */
const classValidatorAccepts = (dto: new () => object, payload: unknown, forbidUnknown = false) =>
  typeof payload === 'object' &&
  payload !== null &&
  !Array.isArray(payload) &&
  validateSync(plainToInstance(dto, payload), forbidUnknown ? { whitelist: true, forbidNonWhitelisted: true } : {}).length === 0;

const timestamp = fc.oneof(
  fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-11-25T10:15:42Z', '2026-11-25T10:15Z', '2026-11-25 10:15:42Z', '2026-13-01T00:00:00Z', '2026-11-25T10:15:42+01:00', ''),
);
const id = fc.oneof(fc.string({ minLength: 0, maxLength: 3 }), fc.string({ minLength: 1, maxLength: 20 }), fc.constant('x'.repeat(201)));
const anything = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.string(), fc.array(fc.integer(), { maxLength: 2 }));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: anything });

const recommendationEvent = fc.record(
  {
    event_id: maybe(id),
    recommendation_id: maybe(id),
    agent_id: maybe(id),
    traffic: maybe(fc.constantFrom('live', 'test', 'LIVE')),
    recommendation_created_at: maybe(timestamp),
    occurred_at: maybe(timestamp),
    billable: maybe(fc.boolean()),
    ad_id: maybe(id),
    product_id: maybe(id),
  },
  { requiredKeys: [] },
);

const accountingEntry = fc.record(
  {
    entry_id: maybe(id),
    agent_id: maybe(id),
    traffic: maybe(fc.constantFrom('live', 'test')),
    recommendation_id: maybe(fc.oneof(id, fc.constant(null))),
    amount_micros: maybe(fc.oneof(fc.integer(), fc.constant(2 ** 53), fc.constant(1.5))),
    currency: maybe(fc.oneof(fc.constantFrom('USD', 'EUR', 'usd', 'US', null))),
    recorded_at: maybe(timestamp),
  },
  { requiredKeys: [] },
);

const reportRequest = fc.record(
  {
    agent_id: maybe(id),
    traffic: maybe(fc.constantFrom('live', 'test', 'prod')),
    time_range: maybe(fc.constantFrom('today', '1d', '7d', '30d', '90d', 'all', '2d')),
    extra: fc.string(),
  },
  { requiredKeys: [] },
);

describe('fast validation never accepts what class-validator rejects', () => {
  it('recommendation events', () => {
    fc.assert(
      fc.property(fc.oneof(recommendationEvent, anything), (payload) => {
        if (passesRecommendationEventFastCheck(payload)) expect(classValidatorAccepts(RecommendationEventDto, payload)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('accounting entries', () => {
    fc.assert(
      fc.property(fc.oneof(accountingEntry, anything), (payload) => {
        if (passesAccountingEntryFastCheck(payload)) expect(classValidatorAccepts(AccountingEntryDto, payload)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('report requests (unknown fields refused, as the RPC server does)', () => {
    fc.assert(
      fc.property(fc.oneof(reportRequest, anything), (payload) => {
        if (passesReportRequestFastCheck(payload)) expect(classValidatorAccepts(ReportRequestDto, payload, true)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('report requests carry their check (@FastCheck), so the RPC validation pipe uses it', () => {
    expect(fastCheckOf(ReportRequestDto)).toBe(passesReportRequestFastCheck);
  });

  it('accepts the valid shapes of DESIGN §4', () => {
    const created = '2026-11-25T10:15:42.120Z';
    expect(
      passesRecommendationEventFastCheck({ event_id: 'e', recommendation_id: 'r', agent_id: 'a', traffic: 'live', recommendation_created_at: created, occurred_at: created, billable: true, ad_id: 'ad', product_id: 'p' }),
    ).toBe(true);
    expect(passesAccountingEntryFastCheck({ entry_id: 'x', agent_id: 'a', traffic: 'test', recommendation_id: null, amount_micros: -5, currency: null, recorded_at: created })).toBe(true);
    expect(passesReportRequestFastCheck({ agent_id: 'a', traffic: 'live', time_range: '7d' })).toBe(true);
  });
});
