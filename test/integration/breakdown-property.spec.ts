import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { initializeDatabase } from '#libs/database';
import { BREAKDOWN_BYS, BREAKDOWN_SORTS, SERIES_FIGURES, TIME_RANGES } from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { StoragePartitions } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { BreakdownBuilder } from '../../apps/reporting-projection/src/publication/breakdown-builder.service.js';
import { RollupQueryRepository } from '../../apps/reporting-projection/src/publication/rollup-query.repository.js';
import { SnapshotBuilder } from '../../apps/reporting-projection/src/publication/snapshot-builder.service.js';
import { presentBreakdown } from '../../apps/reporting-projection/src/reports/breakdown.presenter.js';
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { deliveryPlan, newTestDatabase, type TestDatabase } from '../support/index.js';
import { breakdownEventPayload, referenceBreakdown, type BreakdownModelEvent } from '../support/reference-breakdown.js';

/**
 * Breakdowns (DESIGN §9) against a naive reference: random recommendations and events (some
 * `generated` events without an ad or product, some arriving after the recommendation's other
 * events, several ads that overtake each other), shuffled, duplicated and redelivered in random
 * batches, give for every platform, traffic, range, dimension and sort exactly the reference
 * rows in the reference order; and for any limit, rows + other equal the Report of the same
 * scope read in the same database snapshot. The cutoff is New York's fall-back day and the zones
 * include Kathmandu (+05:45) and Lord Howe (+10:30/+11), so local midnights fall on quarter hours.
 */
const PROCESSED_THROUGH = new Date('2024-11-03T13:07:00Z');
const AGENTS = ['agent_a', 'agent_b'] as const;
const TRAFFICS = ['live', 'test'] as const;
const ZONES = ['UTC', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
const KINDS = ['generated', 'generated', 'shown', 'mentioned', 'clicked', 'engaged', 'converted'] as const;
const ADS = ['ad_1', 'ad_2', 'ad_3', 'ad_10', 'Ad_4'];
const PRODUCTS = ['prod_x', 'prod_y'];

const encoder = new TextEncoder();

// Creation times cluster around the edges: the cutoff (any minute of its hour), local midnights, 1d/7d/90d starts.
const instant = fc.oneof(
  fc.integer({ min: -100 * 86_400, max: 3_600 }).map((s) => new Date(PROCESSED_THROUGH.getTime() + s * 1000)),
  fc.integer({ min: -26 * 3_600, max: 120 }).map((s) => new Date(PROCESSED_THROUGH.getTime() + s * 1000)),
  fc.constantFrom(1, 7, 90).chain((days) => fc.integer({ min: -5_400, max: 5_400 }).map((s) => new Date(PROCESSED_THROUGH.getTime() - days * 86_400_000 + s * 1000))),
);

const scenario = fc
  .array(fc.record({ agent: fc.constantFrom(...AGENTS), traffic: fc.constantFrom(...TRAFFICS), createdAt: instant }), { minLength: 1, maxLength: 14 })
  .chain((recs) =>
    fc.record({
      recs: fc.constant(recs),
      lifecycle: fc.array(
        fc.record({
          rec: fc.integer({ min: 0, max: recs.length - 1 }),
          kind: fc.constantFrom(...KINDS),
          billable: fc.boolean(),
          // Other kinds may carry an ad too: it never attributes.
          ad: fc.option(fc.constantFrom(...ADS, ''), { nil: undefined, freq: 4 }),
          product: fc.option(fc.constantFrom(...PRODUCTS), { nil: undefined, freq: 3 }),
          conflict: fc.constantFrom(false, false, false, false, false, 'agent'),
        }),
        { minLength: 1, maxLength: 40 },
      ),
      entries: fc.array(
        fc.record({
          rec: fc.integer({ min: 0, max: recs.length }),
          amount: fc.integer({ min: -2_000_000, max: 5_000_000 }),
          currency: fc.constantFrom('USD', 'USD', 'USD', 'USD', 'EUR', null),
        }),
        { maxLength: 16 },
      ),
      zones: fc.record({ agent_a: fc.constantFrom(...ZONES), agent_b: fc.constantFrom(...ZONES) }),
      seed: fc.integer(),
      partitions: fc.integer({ min: 1, max: 3 }),
      limits: fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 3 }),
    }),
  );

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function buildEvents(s: Scenario): { subject: string; event: BreakdownModelEvent }[] {
  const events: { subject: string; event: BreakdownModelEvent }[] = [];
  s.lifecycle.forEach((l, i) => {
    const rec = s.recs[l.rec];
    const agent = l.conflict === 'agent' ? (rec.agent === 'agent_a' ? 'agent_b' : 'agent_a') : rec.agent;
    events.push({
      subject: `events.recommendation.${l.kind}`,
      event: {
        type: 'recommendation',
        kind: l.kind,
        event_id: `evt_${i}`,
        recommendation_id: `rec_${l.rec}`,
        agent_id: agent,
        traffic: rec.traffic,
        recommendation_created_at: rec.createdAt.toISOString(),
        billable: l.billable,
        ...(l.ad === undefined ? {} : { ad_id: l.ad }),
        ...(l.product === undefined ? {} : { product_id: l.product }),
      },
    });
  });
  s.entries.forEach((e, i) => {
    const rec = s.recs[e.rec] ?? s.recs[0];
    events.push({
      subject: 'events.accounting.entry',
      event: { type: 'accounting', entry_id: `acc_${i}`, agent_id: rec.agent, traffic: rec.traffic, recommendation_id: `rec_${e.rec}`, amount_micros: e.amount, currency: e.currency },
    });
  });
  return events;
}

/** Events in the order the projection first applied them: batch by batch, by sequence inside one. */
function firstApplicationOrder(batches: InboundMessage[][], bySequence: Map<number, BreakdownModelEvent>): BreakdownModelEvent[] {
  const seen = new Set<number>();
  const order: BreakdownModelEvent[] = [];
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

describe('breakdown property: any arrival order gives the reference breakdown, summing to the Report', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let reports: SnapshotBuilder;
  let breakdowns: BreakdownBuilder;

  beforeAll(async () => {
    db = newTestDatabase();
    dataSource = createReportingDataSource(db.url, 4);
    await initializeDatabase(dataSource);
    reports = new SnapshotBuilder(dataSource, new RollupQueryRepository(dataSource));
    breakdowns = new BreakdownBuilder(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('matches the reference for every platform, traffic, range, dimension and sort', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        for (const table of ['recommendation', 'accounting_entry', 'rollup_minute', 'rollup_hour', 'rollup_day', 'breakdown_rollup', 'breakdown_pair', 'platform_timezone']) {
          await dataSource.query(`DELETE FROM reporting.${table}`);
        }
        for (const [agent, zone] of Object.entries(s.zones)) await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, $2, now())`, [agent, zone]);
        const events = buildEvents(s);
        const bySequence = new Map<number, BreakdownModelEvent>();
        const messages: InboundMessage[] = events.map(({ subject, event }, i) => {
          bySequence.set(i + 1, event);
          return { subject, data: encoder.encode(JSON.stringify(breakdownEventPayload(event, PROCESSED_THROUGH))), sequence: i + 1, deliveries: 1 };
        });
        const batches = deliveryPlan(messages, s.seed);
        const projection = new ProjectionService(new ProjectionRepository(dataSource, new StoragePartitions(dataSource, () => PROCESSED_THROUGH.getTime()), BATCHED_FROM[Math.abs(s.seed) % 2]), s.partitions);
        for (const batch of batches) {
          const outcomes = await projection.applyBatch(batch);
          expect(outcomes.every((o) => o.kind === 'applied' || o.cause === 'conflict')).toBe(true);
        }
        const modelEvents = firstApplicationOrder(batches, bySequence);

        const scopes = AGENTS.flatMap((agentId) => TRAFFICS.flatMap((traffic) => TIME_RANGES.map((timeRange) => ({ agentId, traffic, timeRange }))));
        const breakdownScopes = scopes.flatMap((scope) => BREAKDOWN_BYS.map((by) => ({ ...scope, by })));
        const { snapshots, built } = await dataSource.transaction('REPEATABLE READ', async (manager) => ({
          snapshots: await reports.build(scopes, PROCESSED_THROUGH, new Date(), manager),
          built: await breakdowns.build(breakdownScopes, PROCESSED_THROUGH, new Date(), manager),
        }));
        expect(built).toHaveLength(breakdownScopes.length);
        for (const one of built) {
          const zone = s.zones[one.agentId as 'agent_a' | 'agent_b'];
          const period = reportPeriod(one.timeRange, PROCESSED_THROUGH, zone);
          const scope = `${one.agentId}/${one.traffic}/${one.timeRange}/${one.by}`;
          expect({ scope, start: one.start?.toISOString() ?? null, end: one.end.toISOString(), timezone: one.timezone }).toEqual({
            scope,
            start: period.start?.toISOString() ?? null,
            end: period.end.toISOString(),
            timezone: zone,
          });
          const report = snapshots.find((r) => r.agentId === one.agentId && r.traffic === one.traffic && r.timeRange === one.timeRange)!;
          const reportFigures = Object.fromEntries(SERIES_FIGURES.map((name) => [name, report[name]]));
          for (const sort of BREAKDOWN_SORTS) {
            const expected = referenceBreakdown(modelEvents, { agent_id: one.agentId, traffic: one.traffic as 'live' | 'test', start: period.start, end: period.end }, one.by, sort);
            expect({ scope, sort, rows: one.tops[sort] }).toEqual({ scope, sort, rows: expected.slice(0, 100) });
            for (const limit of s.limits) {
              const answer = presentBreakdown(one, 'ready', sort, limit);
              expect(answer.rows).toEqual(expected.slice(0, limit));
              const sums = Object.fromEntries(SERIES_FIGURES.map((name) => [name, answer.rows.reduce((sum, row) => sum + row[name], answer.other[name])]));
              expect({ scope, sort, limit, ...sums }).toEqual({ scope, sort, limit, ...reportFigures });
            }
          }
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  });
});
