import type { AccountingEntryDto, RecommendationEventDto, RecommendationEventKind, Traffic } from '#libs/contracts';
import { BatchPlan, type RecommendationState, type SequencedEvent, type WaitingEntry } from '../../apps/reporting-projection/src/ingestion/batch-plan.js';
import { Level, levelOfKind, zeroCounters, type Counters } from '../../apps/reporting-projection/src/rules/counting.js';

/**
 * The reporting projection's batch plan without a database: what a batch of decoded events does
 * to recommendation rows, accounting entries and rollup deltas. The repository that writes a plan
 * is covered against PostgreSQL by reporting-projection.spec.ts and projection-property.spec.ts.
 */
const CREATED = '2026-03-01T10:15:42.120Z';
const CREATED_MS = Date.parse(CREATED);
const MINUTE = 60_000;
const minuteOf = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;

let sequence = 0;
function lifecycle(kind: RecommendationEventKind, fields: Partial<RecommendationEventDto> = {}): SequencedEvent['event'] {
  const event = { event_id: `evt_${++sequence}`, recommendation_id: 'rec_a', agent_id: 'agent_a', traffic: 'live' as Traffic, recommendation_created_at: CREATED, occurred_at: CREATED, ...fields };
  return { type: 'lifecycle', sequence, kind, level: levelOfKind(kind), event: event as RecommendationEventDto, createdAtMs: Date.parse(event.recommendation_created_at!) };
}
function accounting(fields: Partial<AccountingEntryDto> = {}): SequencedEvent['event'] {
  const entry = { entry_id: `ent_${++sequence}`, agent_id: 'agent_a', traffic: 'live' as Traffic, recommendation_id: 'rec_a', amount_micros: 1_500_000, currency: 'USD', recorded_at: '2026-03-02T08:00:05Z', ...fields };
  return { type: 'accounting', sequence, entry: entry as AccountingEntryDto, recordedAtMs: Date.parse(entry.recorded_at!) };
}
function reconciled(traffic: Traffic, through: string, agent_id?: string): SequencedEvent['event'] {
  return { type: 'reconciled', sequence: ++sequence, watermark: { event_id: `rw_${sequence}`, traffic, reconciled_through: through, agent_id } };
}
const batch = (...events: SequencedEvent['event'][]) => events.map((event, index) => ({ index, event }));

/** A row the repository has just created: no lifecycle event yet. */
function newRow(id: string): RecommendationState {
  return { id, agentId: null, traffic: null, createdAtMs: null, level: Level.unknown, billable: false, attributedEntries: 0, attributedUsdMicros: 0, foreignCurrencyEntries: 0 };
}
function knownRow(id: string, fields: Partial<RecommendationState> = {}): RecommendationState {
  return { ...newRow(id), agentId: 'agent_a', traffic: 'live', createdAtMs: CREATED_MS, level: Level.shown, ...fields };
}

/** Runs every step as the repository does; `stored`: entry ids already in the database. */
function run(plan: BatchPlan, rows: RecommendationState[], options: { waiting?: WaitingEntry[]; stored?: string[] } = {}) {
  const becameKnown = plan.applyLifecycle(rows);
  const nowAttributed = becameKnown.length > 0 ? plan.attributeWaiting((options.waiting ?? []).filter((w) => becameKnown.includes(w.recommendationId!))) : [];
  const toInsert = plan.entriesToInsert();
  plan.countInserted(new Set(toInsert.map((d) => d.entry.entry_id).filter((id) => !(options.stored ?? []).includes(id))));
  return { becameKnown, nowAttributed, toInsert, changed: plan.changedRecommendations() };
}

function counters(fields: Partial<Counters>): Counters {
  return { ...zeroCounters(), ...fields };
}

describe('BatchPlan', () => {
  it('names every recommendation once, sorted (the lock order), and keeps the latest watermark per scope', () => {
    const plan = new BatchPlan(
      batch(
        lifecycle('shown', { recommendation_id: 'rec_b' }),
        accounting({ recommendation_id: 'rec_a' }),
        accounting({ recommendation_id: null }),
        lifecycle('clicked', { recommendation_id: 'rec_b' }),
        reconciled('live', '2026-03-02T00:00:00Z'),
        reconciled('live', '2026-03-03T00:00:00Z'),
        reconciled('live', '2026-03-01T00:00:00Z'),
        reconciled('test', '2026-03-01T00:00:00Z', 'agent_a'),
      ),
    );
    expect(plan.recommendationIds).toEqual(['rec_a', 'rec_b']);
    expect(plan.watermarks).toEqual([
      { traffic: 'live', agentId: '', through: '2026-03-03T00:00:00Z' },
      { traffic: 'test', agentId: 'agent_a', through: '2026-03-01T00:00:00Z' },
    ]);
  });

  it('lets the first event fix the identity and later ones only raise the level, counted once in the creation minute', () => {
    const plan = new BatchPlan(batch(lifecycle('shown'), lifecycle('clicked'), lifecycle('shown', { billable: true })));
    const { becameKnown, changed } = run(plan, [newRow('rec_a')]);
    expect(becameKnown).toEqual(['rec_a']);
    expect(changed).toEqual([knownRow('rec_a', { level: Level.clicked, billable: true })]);
    expect(plan.conflicts.size).toBe(0);
    expect(plan.rollups.sorted('minute')).toEqual([
      { agentId: 'agent_a', traffic: 'live', bucketMs: minuteOf(CREATED_MS), counters: counters({ exposures: 1, clicks: 1, pending_earnings_recommendations: 1 }) },
    ]);
    expect(plan.rollups.sorted('day')).toHaveLength(1);
  });

  it('moves a known recommendation between counters: only the difference is added', () => {
    const plan = new BatchPlan(batch(lifecycle('converted')));
    run(plan, [knownRow('rec_a', { level: Level.clicked })]);
    expect(plan.rollups.sorted('hour').map((r) => r.counters)).toEqual([counters({ conversions: 1 })]);
  });

  it('dead-letters an event that disagrees with the first event, and applies nothing of it', () => {
    const plan = new BatchPlan(batch(lifecycle('shown'), lifecycle('converted', { agent_id: 'agent_other' }), lifecycle('clicked', { recommendation_created_at: '2026-03-01T10:15:43Z' })));
    const { changed } = run(plan, [newRow('rec_a')]);
    expect([...plan.conflicts.keys()]).toEqual([1, 2]);
    expect(plan.conflicts.get(1)).toMatch(/disagrees with the recommendation's first event/);
    expect(changed).toEqual([knownRow('rec_a', { level: Level.shown })]);
  });

  it('attributes an entry of a known recommendation (same platform and traffic) to its creation minute', () => {
    const plan = new BatchPlan(batch(lifecycle('shown', { billable: true }), accounting({ amount_micros: 2_000_000 })));
    const { toInsert, changed } = run(plan, [newRow('rec_a')]);
    expect(toInsert.map((d) => d.attributed)).toEqual([true]);
    expect(changed[0]).toMatchObject({ attributedEntries: 1, attributedUsdMicros: 2_000_000, billable: true });
    expect(plan.rollups.sorted('minute').map((r) => r.counters)).toEqual([counters({ exposures: 1, earnings_micros: 2_000_000 })]);
  });

  it('counts an entry it cannot attribute under review, in the minute it was recorded', () => {
    const recordedAt = '2026-03-02T08:00:05Z';
    const plan = new BatchPlan(
      batch(
        accounting({ recommendation_id: 'rec_unknown', recorded_at: recordedAt }),
        accounting({ recommendation_id: 'rec_a', traffic: 'test', recorded_at: recordedAt }),
        accounting({ recommendation_id: null, recorded_at: recordedAt }),
      ),
    );
    const { toInsert, changed } = run(plan, [knownRow('rec_a'), newRow('rec_unknown')]);
    expect(toInsert.map((d) => d.attributed)).toEqual([false, false, false]);
    expect(changed).toEqual([]);
    expect(plan.rollups.sorted('minute')).toEqual([
      { agentId: 'agent_a', traffic: 'live', bucketMs: minuteOf(Date.parse(recordedAt)), counters: counters({ accounting_review_required: 2 }) },
      { agentId: 'agent_a', traffic: 'test', bucketMs: minuteOf(Date.parse(recordedAt)), counters: counters({ accounting_review_required: 1 }) },
    ]);
  });

  it('attributes entries that waited for a recommendation when its first event arrives', () => {
    const recordedAtMs = Date.parse('2026-02-28T23:59:00Z');
    const waiting: WaitingEntry[] = [
      { entryId: 'ent_early', agentId: 'agent_a', traffic: 'live', recommendationId: 'rec_a', amountMicros: 700_000, currency: 'USD', recordedAtMs },
      { entryId: 'ent_other_platform', agentId: 'agent_b', traffic: 'live', recommendationId: 'rec_a', amountMicros: 1, currency: 'USD', recordedAtMs },
    ];
    const plan = new BatchPlan(batch(lifecycle('clicked')));
    const { nowAttributed, changed } = run(plan, [newRow('rec_a')], { waiting });
    expect(nowAttributed).toEqual(['ent_early']);
    expect(changed[0]).toMatchObject({ attributedEntries: 1, attributedUsdMicros: 700_000 });
    expect(plan.rollups.sorted('minute')).toEqual([
      { agentId: 'agent_a', traffic: 'live', bucketMs: minuteOf(recordedAtMs), counters: counters({ accounting_review_required: -1 }) },
      { agentId: 'agent_a', traffic: 'live', bucketMs: minuteOf(CREATED_MS), counters: counters({ exposures: 1, clicks: 1, earnings_micros: 700_000 }) },
    ]);
  });

  it('excludes the earnings of a recommendation with an entry in another or no currency', () => {
    const plan = new BatchPlan(batch(lifecycle('shown'), accounting({ currency: 'USD' }), accounting({ currency: null })));
    const { changed } = run(plan, [newRow('rec_a')]);
    expect(changed[0]).toMatchObject({ attributedEntries: 2, foreignCurrencyEntries: 1 });
    expect(plan.rollups.sorted('minute').map((r) => r.counters)).toEqual([counters({ exposures: 1, earnings_excluded_recommendations: 1 })]);
  });

  it('stores a repeated entry_id once and counts only entries the insert stored', () => {
    const first = accounting({ entry_id: 'ent_dup', amount_micros: 1_000_000 });
    const plan = new BatchPlan(batch(lifecycle('shown'), first, accounting({ entry_id: 'ent_dup', amount_micros: 9 }), accounting({ entry_id: 'ent_old' })));
    const { toInsert, changed } = run(plan, [newRow('rec_a')], { stored: ['ent_old'] });
    expect(toInsert.map((d) => [d.entry.entry_id, d.entry.amount_micros])).toEqual([
      ['ent_dup', 1_000_000],
      ['ent_old', 1_500_000],
    ]);
    expect(changed[0]).toMatchObject({ attributedEntries: 1, attributedUsdMicros: 1_000_000 });
  });

  it('changes nothing when the same batch is applied again (redelivery, replay)', () => {
    const events = batch(lifecycle('shown', { billable: true }), lifecycle('engaged'), accounting(), accounting({ recommendation_id: 'rec_b' }));
    const first = new BatchPlan(events);
    const { changed } = run(first, [newRow('rec_a'), newRow('rec_b')]);
    const after = new Map(changed.map((s) => [s.id, s]));
    const again = new BatchPlan(events);
    const replay = run(again, [after.get('rec_a')!, newRow('rec_b')], { stored: first.entriesToInsert().map((d) => d.entry.entry_id) });
    expect(replay.becameKnown).toEqual([]);
    expect(replay.changed).toEqual([]);
    expect(again.rollups.sorted('minute')).toEqual([]);
    expect(again.conflicts.size).toBe(0);
  });
});
