import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { initializeDatabase } from '#libs/database';
import { SERIES_FIGURES, SERIES_GRANULARITIES, TIME_RANGES, isGranularityAllowed, type TimeRange } from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { StoragePartitions } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { RollupQueryRepository } from '../../apps/reporting-projection/src/publication/rollup-query.repository.js';
import { SeriesBuilder } from '../../apps/reporting-projection/src/publication/series-builder.service.js';
import { SeriesQueryRepository } from '../../apps/reporting-projection/src/publication/series-query.repository.js';
import { SnapshotBuilder } from '../../apps/reporting-projection/src/publication/snapshot-builder.service.js';
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { deliveryPlan, newTestDatabase, type TestDatabase } from '../support/index.js';
import { referenceReport, type ModelEvent } from '../support/reference-model.js';
import { ReferenceCalendar, referenceSeries } from '../support/reference-series.js';

/**
 * The projection against the reference model: random recommendations and events, shuffled,
 * duplicated and redelivered in random batches, accounting before and after its
 * recommendation, give exactly the reference report for every time range, platform, traffic;
 * and the series of every range and granularity (DESIGN §7), read in the same database
 * snapshot, equal the reference series bucket by bucket in each platform's zone, and sum to the
 * report. The cutoff is New York's fall-back day (a 25-hour `today`), and the 90-day window
 * holds Lord Howe's October clock change.
 */
const PROCESSED_THROUGH = new Date('2024-11-03T13:07:00Z');
const AGENTS = ['agent_a', 'agent_b'] as const;
const TRAFFICS = ['live', 'test'] as const;
const ZONES = ['UTC', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
const KINDS = ['generated', 'shown', 'mentioned', 'clicked', 'engaged', 'converted'] as const;

const encoder = new TextEncoder();

// Creation times cluster around the edges that matter: the cutoff, local midnights, 1d/7d/90d.
const instant = fc.oneof(
  fc.integer({ min: -100 * 86_400, max: 3_600 }).map((s) => new Date(PROCESSED_THROUGH.getTime() + s * 1000)),
  fc.integer({ min: -26 * 3_600, max: 120 }).map((s) => new Date(PROCESSED_THROUGH.getTime() + s * 1000)),
  fc.constantFrom(-1, 0, 1, 59, 60).map((s) => new Date(PROCESSED_THROUGH.getTime() - 86_400_000 + s * 1000)),
);

const recommendation = fc.record({
  agent: fc.constantFrom(...AGENTS),
  traffic: fc.constantFrom(...TRAFFICS),
  createdAt: instant,
});

const scenario = fc
  .array(recommendation, { minLength: 1, maxLength: 8 })
  .chain((recs) => {
    const recIndex = fc.integer({ min: 0, max: recs.length + 1 }); // beyond the end: an unknown recommendation
    const lifecycle = fc.record({
      rec: fc.integer({ min: 0, max: recs.length - 1 }),
      kind: fc.constantFrom(...KINDS),
      billable: fc.boolean(),
      conflict: fc.constantFrom(false, false, false, false, 'agent', 'created_at'),
    });
    const entry = fc.record({
      rec: fc.option(recIndex, { nil: null }),
      agent: fc.constantFrom(...AGENTS),
      matchRec: fc.boolean(),
      amount: fc.integer({ min: -2_000_000, max: 5_000_000 }),
      currency: fc.constantFrom('USD', 'USD', 'USD', 'EUR', null),
      recordedAt: instant,
    });
    const watermark = fc.record({
      traffic: fc.constantFrom(...TRAFFICS),
      agent: fc.option(fc.constantFrom(...AGENTS), { nil: undefined }),
      at: instant,
    });
    return fc.record({
      recs: fc.constant(recs),
      lifecycle: fc.array(lifecycle, { minLength: 1, maxLength: 25 }),
      entries: fc.array(entry, { maxLength: 10 }),
      watermarks: fc.array(watermark, { maxLength: 3 }),
      zones: fc.record({ agent_a: fc.constantFrom(...ZONES), agent_b: fc.constantFrom(...ZONES) }),
      seed: fc.integer(),
      partitions: fc.integer({ min: 1, max: 3 }),
    });
  });

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function buildEvents(s: Scenario): { subject: string; event: ModelEvent }[] {
  const events: { subject: string; event: ModelEvent }[] = [];
  s.lifecycle.forEach((l, i) => {
    const rec = s.recs[l.rec];
    const agent = l.conflict === 'agent' ? (rec.agent === 'agent_a' ? 'agent_b' : 'agent_a') : rec.agent;
    const created = l.conflict === 'created_at' ? new Date(rec.createdAt.getTime() + 1000) : rec.createdAt;
    events.push({
      subject: `events.recommendation.${l.kind}`,
      event: {
        type: 'recommendation',
        kind: l.kind,
        event_id: `evt_${i}`,
        recommendation_id: `rec_${l.rec}`,
        agent_id: agent,
        traffic: rec.traffic,
        recommendation_created_at: created.toISOString(),
        occurred_at: created.toISOString(),
        billable: l.billable,
      },
    });
  });
  s.entries.forEach((e, i) => {
    const rec = e.rec === null ? undefined : s.recs[e.rec];
    events.push({
      subject: 'events.accounting.entry',
      event: {
        type: 'accounting',
        entry_id: `acc_${i}`,
        agent_id: rec && e.matchRec ? rec.agent : e.agent,
        traffic: rec && e.matchRec ? rec.traffic : 'live',
        recommendation_id: e.rec === null ? null : `rec_${e.rec}`,
        amount_micros: e.amount,
        currency: e.currency,
        recorded_at: e.recordedAt.toISOString(),
      },
    });
  });
  s.watermarks.forEach((w, i) => {
    events.push({
      subject: 'events.accounting.reconciled',
      event: { type: 'reconciled', event_id: `wm_${i}`, traffic: w.traffic, reconciled_through: w.at.toISOString(), ...(w.agent ? { agent_id: w.agent } : {}) },
    });
  });
  return events;
}

/** Events in the order the projection first applied them: batch by batch, by sequence inside one. */
function firstApplicationOrder(batches: InboundMessage[][], bySequence: Map<number, ModelEvent>): ModelEvent[] {
  const seen = new Set<number>();
  const order: ModelEvent[] = [];
  for (const batch of batches) {
    for (const message of [...batch].sort((a, b) => a.sequence - b.sequence)) {
      if (seen.has(message.sequence)) continue;
      seen.add(message.sequence);
      order.push(bySequence.get(message.sequence)!);
    }
  }
  return order;
}


/** Plans above this size send their statements batched (WriteSession): every other scenario takes that path even for the smallest batch. */
const BATCHED_FROM = [0, 32];

describe('projection property: any arrival order gives the reference report', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let builder: SnapshotBuilder;
  let seriesBuilder: SeriesBuilder;
  // The local calendars of the zones over every period of the scenarios (creation times reach 100 days back).
  const calendars = new Map(ZONES.map((zone) => [zone, new ReferenceCalendar(zone, new Date(PROCESSED_THROUGH.getTime() - 103 * 86_400_000), PROCESSED_THROUGH)]));

  beforeAll(async () => {
    db = newTestDatabase();
    dataSource = createReportingDataSource(db.url, 4);
    await initializeDatabase(dataSource);
    builder = new SnapshotBuilder(dataSource, new RollupQueryRepository(dataSource));
    seriesBuilder = new SeriesBuilder(dataSource, new SeriesQueryRepository());
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('matches the reference model for every platform, traffic and time range', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        // DELETE, not TRUNCATE: the small tables are partitioned by week, and truncating every partition costs more.
        for (const table of ['recommendation', 'accounting_entry', 'rollup_minute', 'rollup_hour', 'rollup_day', 'reconciliation_watermark', 'platform_timezone']) {
          await dataSource.query(`DELETE FROM reporting.${table}`);
        }
        for (const [agent, zone] of Object.entries(s.zones)) {
          await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, $2, now())`, [agent, zone]);
        }
        const events = buildEvents(s);
        const bySequence = new Map<number, ModelEvent>();
        const messages: InboundMessage[] = events.map(({ subject, event }, i) => {
          bySequence.set(i + 1, event);
          const { type: _type, kind: _kind, ...payload } = event as ModelEvent & { kind?: string };
          return { subject, data: encoder.encode(JSON.stringify(payload)), sequence: i + 1, deliveries: 1 };
        });
        const batches = deliveryPlan(messages, s.seed);
        const projection = new ProjectionService(new ProjectionRepository(dataSource, new StoragePartitions(dataSource, () => PROCESSED_THROUGH.getTime()), BATCHED_FROM[Math.abs(s.seed) % 2]), s.partitions);
        for (const batch of batches) {
          const outcomes = await projection.applyBatch(batch);
          expect(outcomes.every((o) => o.kind === 'applied' || o.cause === 'conflict')).toBe(true);
        }
        const modelEvents = firstApplicationOrder(batches, bySequence);

        const scopes = AGENTS.flatMap((agentId) => TRAFFICS.flatMap((traffic) => TIME_RANGES.map((timeRange) => ({ agentId, traffic, timeRange }))));
        const seriesScopes = scopes.flatMap((scope) => SERIES_GRANULARITIES.filter((g) => isGranularityAllowed(scope.timeRange, g)).map((granularity) => ({ ...scope, granularity })));
        // Reports and series in one database snapshot, as the publication reads them.
        const { snapshots, series } = await dataSource.transaction('REPEATABLE READ', async (manager) => ({
          snapshots: await builder.build(scopes, PROCESSED_THROUGH, new Date(), manager),
          series: await seriesBuilder.build(seriesScopes, PROCESSED_THROUGH, new Date(), manager),
        }));
        expect(series).toHaveLength(seriesScopes.length);
        for (const one of series) {
          const zone = s.zones[one.agentId as 'agent_a' | 'agent_b'];
          const period = reportPeriod(one.timeRange, PROCESSED_THROUGH, zone);
          const scope = `${one.agentId}/${one.traffic}/${one.timeRange}/${one.granularity}`;
          const expected = referenceSeries(modelEvents, { agent_id: one.agentId, traffic: one.traffic as 'live' | 'test', start: period.start, end: period.end }, one.granularity, calendars.get(zone)!);
          expect({ scope, buckets: one.buckets }).toEqual({ scope, buckets: expected });
          expect({ scope, start: one.start?.toISOString() ?? null, end: one.end.toISOString(), timezone: one.timezone }).toEqual({
            scope,
            start: period.start?.toISOString() ?? null,
            end: period.end.toISOString(),
            timezone: zone,
          });
          const report = snapshots.find((r) => r.agentId === one.agentId && r.traffic === one.traffic && r.timeRange === one.timeRange)!;
          const sums = Object.fromEntries(SERIES_FIGURES.map((name) => [name, one.buckets.reduce((sum, bucket) => sum + bucket[name], 0)]));
          expect({ scope, ...sums }).toEqual({ scope, ...pick(report, sums) });
        }
        for (const snapshot of snapshots) {
          const zone = s.zones[snapshot.agentId as 'agent_a' | 'agent_b'];
          const period = reportPeriod(snapshot.timeRange as TimeRange, PROCESSED_THROUGH, zone);
          const expected = referenceReport(modelEvents, {
            agent_id: snapshot.agentId,
            traffic: snapshot.traffic as 'live' | 'test',
            start: period.start,
            end: period.end,
          });
          const { reconciled_through, ...counters } = expected;
          expect({ scope: `${snapshot.agentId}/${snapshot.traffic}/${snapshot.timeRange}`, ...pick(snapshot, counters) }).toEqual({
            scope: `${snapshot.agentId}/${snapshot.traffic}/${snapshot.timeRange}`,
            ...counters,
          });
          expect(snapshot.reconciledThrough?.toISOString() ?? null).toBe(reconciled_through?.toISOString() ?? null);
          expect(snapshot.timezone).toBe(zone);
          const expectedCoverage =
            reconciled_through === null
              ? 'unavailable'
              : reconciled_through >= period.end && counters.pending_earnings_recommendations === 0 && counters.accounting_review_required === 0
                ? 'complete'
                : 'partial';
          expect(snapshot.coverage).toBe(expectedCoverage);
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 60) },
    );
  });
});

function pick<T extends object>(source: T, shape: object): Partial<T> {
  return Object.fromEntries(Object.keys(shape).map((k) => [k, (source as Record<string, unknown>)[k]])) as Partial<T>;
}
