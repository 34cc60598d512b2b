import { referenceReport, zeroCounters, type ModelEvent } from '../support/reference-model.js';

type Kind = Extract<ModelEvent, { type: 'recommendation' }>['kind'];
let sequence = 0;

function lifecycle(
  kind: Kind,
  recommendation_id: string,
  overrides: Partial<Extract<ModelEvent, { type: 'recommendation' }>> = {},
): ModelEvent {
  return {
    type: 'recommendation',
    kind,
    event_id: `evt_${++sequence}`,
    recommendation_id,
    agent_id: 'agent_a',
    traffic: 'live',
    recommendation_created_at: '2024-11-03T10:15:42.120Z',
    occurred_at: '2024-11-03T10:16:00.000Z',
    ...overrides,
  };
}

function entry(
  recommendation_id: string | null,
  amount_micros: number,
  overrides: Partial<Extract<ModelEvent, { type: 'accounting' }>> = {},
): ModelEvent {
  return {
    type: 'accounting',
    entry_id: `acc_${++sequence}`,
    agent_id: 'agent_a',
    traffic: 'live',
    recommendation_id,
    amount_micros,
    currency: 'USD',
    recorded_at: '2024-11-03T11:00:00.000Z',
    ...overrides,
  };
}

const scope = {
  agent_id: 'agent_a',
  traffic: 'live' as const,
  start: new Date('2024-11-03T00:00:00Z'),
  end: new Date('2024-11-04T00:00:00Z'),
};

const zero = { ...zeroCounters(), reconciled_through: null };

describe('referenceReport', () => {
  it('returns zeros and no watermark for an empty stream', () => {
    expect(referenceReport([], scope)).toEqual(zero);
  });

  it('counts each recommendation once at its highest level, in any order', () => {
    const events = [
      lifecycle('converted', 'rec_1'),
      lifecycle('engaged', 'rec_1'),
      lifecycle('shown', 'rec_1'),
      lifecycle('mentioned', 'rec_2'),
      lifecycle('engaged', 'rec_3'),
      lifecycle('clicked', 'rec_3'),
      lifecycle('clicked', 'rec_4'),
      lifecycle('generated', 'rec_5'),
    ];
    expect(referenceReport(events, scope)).toEqual({ ...zero, exposures: 4, clicks: 3, engagements: 1, conversions: 1 });
  });

  it('ignores a later event that disagrees on agent, traffic or created_at (dead-lettered)', () => {
    const events = [
      lifecycle('shown', 'rec_1'),
      lifecycle('converted', 'rec_1', { agent_id: 'agent_b' }),
      lifecycle('converted', 'rec_1', { traffic: 'test' }),
      lifecycle('converted', 'rec_1', { recommendation_created_at: '2024-11-02T10:15:42.120Z', billable: true }),
      lifecycle('clicked', 'rec_1', { recommendation_created_at: '2024-11-03T10:15:42.120Z' }),
    ];
    expect(referenceReport(events, scope)).toEqual({ ...zero, exposures: 1, clicks: 1 });
    // The conflicting events do not create the recommendation for the other agent either.
    expect(referenceReport(events, { ...scope, agent_id: 'agent_b' })).toEqual(zero);
  });

  it('treats the same created_at written differently as agreeing', () => {
    const events = [
      lifecycle('shown', 'rec_1', { recommendation_created_at: '2024-11-03T10:15:00Z' }),
      lifecycle('clicked', 'rec_1', { recommendation_created_at: '2024-11-03T10:15:00.000Z' }),
    ];
    expect(referenceReport(events, scope)).toMatchObject({ exposures: 1, clicks: 1 });
  });

  it('counts duplicates once: the first event with an event_id or entry_id wins', () => {
    const shown = lifecycle('shown', 'rec_1');
    const paid = entry('rec_1', 1_000_000);
    const events: ModelEvent[] = [
      shown,
      { ...shown },
      // A redelivery under the same id with other content is still the same event.
      { ...(shown as Extract<ModelEvent, { type: 'recommendation' }>), kind: 'converted' },
      paid,
      { ...paid },
      { ...(paid as Extract<ModelEvent, { type: 'accounting' }>), amount_micros: 9_000_000 },
    ];
    expect(referenceReport(events, scope)).toEqual({ ...zero, exposures: 1, earnings_micros: 1_000_000 });
  });

  it('attributes an entry that arrived before its recommendation', () => {
    const events = [entry('rec_1', 1_250_000), entry('rec_1', -250_000), lifecycle('clicked', 'rec_1', { billable: true })];
    expect(referenceReport(events, scope)).toEqual({ ...zero, exposures: 1, clicks: 1, earnings_micros: 1_000_000 });
  });

  it('excludes a recommendation with any foreign or unresolved entry whole, once', () => {
    const events = [
      lifecycle('converted', 'rec_eur'),
      entry('rec_eur', 1_000_000),
      entry('rec_eur', 2_000_000, { currency: 'EUR' }),
      entry('rec_eur', 3_000_000, { currency: 'EUR' }),
      lifecycle('shown', 'rec_null'),
      entry('rec_null', 500_000, { currency: null }),
      lifecycle('shown', 'rec_usd'),
      entry('rec_usd', 700_000),
    ];
    expect(referenceReport(events, scope)).toEqual({
      ...zero,
      exposures: 3,
      clicks: 1,
      conversions: 1,
      earnings_micros: 700_000,
      earnings_excluded_recommendations: 2,
    });
  });

  it('counts pending billable recommendations, including generated-only ones', () => {
    const events = [
      lifecycle('generated', 'rec_gen', { billable: true }),
      lifecycle('shown', 'rec_shown'),
      lifecycle('clicked', 'rec_shown', { billable: true }),
      lifecycle('clicked', 'rec_paid', { billable: true }),
      entry('rec_paid', 0),
      lifecycle('clicked', 'rec_free'),
      lifecycle('generated', 'rec_gen_paid'),
      entry('rec_gen_paid', 400_000),
    ];
    expect(referenceReport(events, scope)).toEqual({
      ...zero,
      exposures: 3,
      clicks: 3,
      earnings_micros: 400_000,
      pending_earnings_recommendations: 2,
    });
  });

  it('puts unattributable entries under review in the period of their recorded_at', () => {
    const events = [
      lifecycle('shown', 'rec_b', { agent_id: 'agent_b' }),
      lifecycle('shown', 'rec_test', { traffic: 'test' }),
      entry(null, 100), // no recommendation id
      entry('rec_never', 200), // only ever referenced by accounting
      entry('rec_b', 300), // recommendation of another platform
      entry('rec_test', 400), // recommendation of other traffic
      entry(null, 500, { recorded_at: '2024-11-04T00:00:00.000Z' }), // after the period
      entry(null, 600, { recorded_at: '2024-11-03T23:59:59.999Z' }), // last minute of the period
      entry(null, 700, { agent_id: 'agent_b' }), // another platform's review
      entry(null, 800, { traffic: 'test' }), // other traffic's review
    ];
    expect(referenceReport(events, scope)).toEqual({ ...zero, accounting_review_required: 5 });
    expect(referenceReport(events, { ...scope, start: null, end: new Date('2024-11-05T00:00:00Z') })).toMatchObject({
      accounting_review_required: 6,
    });
    expect(referenceReport(events, { ...scope, traffic: 'test' })).toMatchObject({
      exposures: 1,
      earnings_micros: 0, // the live entry does not attribute to the test recommendation
      accounting_review_required: 1,
    });
  });

  it('places a recommendation in the period of its creation minute, however late its events', () => {
    const events = [
      lifecycle('shown', 'rec_edge', { recommendation_created_at: '2024-11-03T23:59:59.999Z' }),
      lifecycle('converted', 'rec_edge', {
        recommendation_created_at: '2024-11-03T23:59:59.999Z',
        occurred_at: '2024-11-10T00:00:00.000Z',
      }),
      lifecycle('shown', 'rec_next', { recommendation_created_at: '2024-11-04T00:00:00.000Z' }),
      lifecycle('shown', 'rec_before', { recommendation_created_at: '2024-11-02T23:59:59.999Z' }),
      entry('rec_next', 5, { recorded_at: '2024-11-03T12:00:00.000Z' }),
    ];
    expect(referenceReport(events, scope)).toEqual({ ...zero, exposures: 1, clicks: 1, conversions: 1 });
    const nextDay = { ...scope, start: new Date('2024-11-04T00:00:00Z'), end: new Date('2024-11-05T00:00:00Z') };
    expect(referenceReport(events, nextDay)).toEqual({ ...zero, exposures: 1, earnings_micros: 5 });
    expect(referenceReport(events, { ...scope, start: null })).toMatchObject({ exposures: 2 });
  });

  it('takes the latest global or own reconciliation watermark of the scope’s traffic', () => {
    const reconciled = (event_id: string, reconciled_through: string, extra: object = {}): ModelEvent => ({
      type: 'reconciled',
      event_id,
      traffic: 'live',
      reconciled_through,
      ...extra,
    });
    const events = [
      reconciled('r1', '2024-11-03T10:00:00Z'),
      reconciled('r2', '2024-11-03T12:00:00Z', { agent_id: 'agent_a' }),
      reconciled('r3', '2024-11-03T11:00:00Z'), // never moves backwards
      reconciled('r4', '2024-11-03T20:00:00Z', { agent_id: 'agent_b' }),
      reconciled('r5', '2024-11-03T21:00:00Z', { traffic: 'test' }),
    ];
    expect(referenceReport(events, scope).reconciled_through).toEqual(new Date('2024-11-03T12:00:00Z'));
    expect(referenceReport(events, { ...scope, agent_id: 'agent_b' }).reconciled_through).toEqual(
      new Date('2024-11-03T20:00:00Z'),
    );
    expect(referenceReport(events, { ...scope, agent_id: 'agent_c' }).reconciled_through).toEqual(
      new Date('2024-11-03T11:00:00Z'),
    );
    expect(referenceReport(events, { ...scope, traffic: 'test' }).reconciled_through).toEqual(
      new Date('2024-11-03T21:00:00Z'),
    );
  });
});
