import {
  addCounters,
  contributionOf,
  COUNTER_NAMES,
  difference,
  isZero,
  Level,
  levelOfKind,
  zeroCounters,
  type Counters,
  type RecommendationFacts,
} from '../../apps/reporting-projection/src/rules/counting.js';

const facts = (overrides: Partial<RecommendationFacts>): RecommendationFacts => ({
  level: Level.shown,
  billable: false,
  attributedEntries: 0,
  attributedUsdMicros: 0,
  foreignCurrencyEntries: 0,
  ...overrides,
});

const counters = (overrides: Partial<Counters>): Counters => ({ ...zeroCounters(), ...overrides });

describe('levelOfKind', () => {
  it('orders generated < shown = mentioned < clicked < engaged < converted', () => {
    expect(levelOfKind('generated')).toBe(0);
    expect(levelOfKind('shown')).toBe(1);
    expect(levelOfKind('mentioned')).toBe(1);
    expect(levelOfKind('clicked')).toBe(2);
    expect(levelOfKind('engaged')).toBe(3);
    expect(levelOfKind('converted')).toBe(4);
  });
});

describe('contributionOf', () => {
  it.each([
    ['unknown (accounting only)', Level.unknown, counters({})],
    ['generated only', Level.generated, counters({})],
    ['shown or mentioned', Level.shown, counters({ exposures: 1 })],
    ['clicked', Level.clicked, counters({ exposures: 1, clicks: 1 })],
    ['engaged', Level.engaged, counters({ exposures: 1, clicks: 1, engagements: 1 })],
    ['converted (not engaged, even if engaged earlier)', Level.converted, counters({ exposures: 1, clicks: 1, conversions: 1 })],
  ])('counts a %s recommendation once at its highest level', (_name, level, expected) => {
    expect(contributionOf(facts({ level }))).toEqual(expected);
  });

  it('sums attributed USD earnings', () => {
    expect(contributionOf(facts({ level: Level.clicked, attributedEntries: 2, attributedUsdMicros: 1_750_000 }))).toEqual(
      counters({ exposures: 1, clicks: 1, earnings_micros: 1_750_000 }),
    );
  });

  it('keeps a negative (reversed) USD total as it is', () => {
    expect(contributionOf(facts({ attributedEntries: 2, attributedUsdMicros: -250_000 })).earnings_micros).toBe(-250_000);
  });

  it('excludes all earnings of a recommendation with any foreign or unresolved entry, once', () => {
    expect(
      contributionOf(facts({ level: Level.converted, attributedEntries: 3, attributedUsdMicros: 2_000_000, foreignCurrencyEntries: 2 })),
    ).toEqual(counters({ exposures: 1, clicks: 1, conversions: 1, earnings_excluded_recommendations: 1 }));
  });

  it('marks billable activity without an attributed entry as pending', () => {
    expect(contributionOf(facts({ billable: true }))).toEqual(counters({ exposures: 1, pending_earnings_recommendations: 1 }));
    expect(contributionOf(facts({ billable: true, attributedEntries: 1, attributedUsdMicros: 5 }))).toEqual(
      counters({ exposures: 1, earnings_micros: 5 }),
    );
    expect(contributionOf(facts({ billable: true, attributedEntries: 1, foreignCurrencyEntries: 1 }))).toEqual(
      counters({ exposures: 1, earnings_excluded_recommendations: 1 }),
    );
    expect(contributionOf(facts({ billable: false }))).toEqual(counters({ exposures: 1 }));
  });

  it('gives a generated-only recommendation earnings and pending but no activity', () => {
    expect(contributionOf(facts({ level: Level.generated, attributedEntries: 1, attributedUsdMicros: 900 }))).toEqual(
      counters({ earnings_micros: 900 }),
    );
    expect(contributionOf(facts({ level: Level.generated, billable: true }))).toEqual(
      counters({ pending_earnings_recommendations: 1 }),
    );
    expect(contributionOf(facts({ level: Level.generated, attributedEntries: 1, foreignCurrencyEntries: 1 }))).toEqual(
      counters({ earnings_excluded_recommendations: 1 }),
    );
  });

  it('gives nothing to a recommendation known only from accounting', () => {
    expect(
      contributionOf(facts({ level: Level.unknown, billable: true, attributedEntries: 1, attributedUsdMicros: 7, foreignCurrencyEntries: 1 })),
    ).toEqual(zeroCounters());
  });

  it('moves a recommendation between counters as its level rises (engaged → converted)', () => {
    const before = contributionOf(facts({ level: Level.engaged }));
    const after = contributionOf(facts({ level: Level.converted }));
    expect(difference(after, before)).toEqual(counters({ engagements: -1, conversions: 1 }));
    expect(isZero(difference(after, after))).toBe(true);
    expect(addCounters(before, difference(after, before))).toEqual(after);
  });

  it('adds, subtracts and tests for zero every counter of a Report, one by one', () => {
    for (const [i, name] of COUNTER_NAMES.entries()) {
      const one = counters({ [name]: i + 2 });
      expect(isZero(one)).toBe(false);
      expect(addCounters(counters({ [name]: 1 }), one)).toEqual(counters({ [name]: i + 3 }));
      expect(addCounters(counters({ [name]: 1 }), one, -1)).toEqual(counters({ [name]: -i - 1 }));
    }
    expect(Object.keys(zeroCounters()).sort()).toEqual([...COUNTER_NAMES].sort());
  });
});
