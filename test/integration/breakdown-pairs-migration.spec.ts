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
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { deliveryPlan, newTestDatabase, type TestDatabase } from '../support/index.js';
import { breakdownEventPayload, referenceBreakdown, type BreakdownModelEvent } from '../support/reference-breakdown.js';

/**
 * The cut from one breakdown row per dimension (breakdown_rollup) to one row per (ad, product)
 * pair (breakdown_pair, migration ReportingBreakdownPairs1795930000000): a store populated under
 * the previous layout, migrated, then fed more events — among them late `generated` events that
 * attribute recommendations counted before the migration, moving them from unattributed to an ad
 * and a product — gives every breakdown (platform, traffic, range, dimension, sort) exactly the
 * reference rows of all the events, summing to the Report; and the migration keeps every row of
 * the previous layout.
 *
 * The previous layout's rows are written as the previous code wrote them: the first events are
 * applied, then the pair migration is undone (its down folds each pair row into the row of its ad
 * and that of its product, per dimension, exactly the deltas the previous code added), and the
 * result is checked against the definition of that layout (per dimension, id and hour, the
 * figures of the recommendations stored with that id), before migrating up again.
 */
const PROCESSED_THROUGH = new Date('2024-11-03T13:07:00Z');
const AGENTS = ['agent_a', 'agent_b'] as const;
const TRAFFICS = ['live', 'test'] as const;
const ZONES = ['UTC', 'America/New_York', 'Asia/Kathmandu'];
const KINDS = ['generated', 'shown', 'mentioned', 'clicked', 'engaged', 'converted'] as const;
const ADS = ['ad_1', 'ad_2', 'ad_10', 'Ad_4'];
const PRODUCTS = ['prod_x', 'prod_y'];
const FIGURES = 'exposures, clicks, engagements, conversions, earnings_micros';

const encoder = new TextEncoder();

const instant = fc.oneof(
  fc.integer({ min: -100 * 86_400, max: 3_600 }).map((s) => new Date(PROCESSED_THROUGH.getTime() + s * 1000)),
  fc.integer({ min: -26 * 3_600, max: 120 }).map((s) => new Date(PROCESSED_THROUGH.getTime() + s * 1000)),
  fc.constantFrom(1, 7, 90).chain((days) => fc.integer({ min: -5_400, max: 5_400 }).map((s) => new Date(PROCESSED_THROUGH.getTime() - days * 86_400_000 + s * 1000))),
);

const lifecycleEvent = (recs: number) =>
  fc.record({
    rec: fc.integer({ min: 0, max: recs - 1 }),
    kind: fc.constantFrom(...KINDS),
    billable: fc.boolean(),
    // Before the cut, most `generated` events carry no ad: the late ones after it attribute them.
    ad: fc.option(fc.constantFrom(...ADS, ''), { nil: undefined, freq: 2 }),
    product: fc.option(fc.constantFrom(...PRODUCTS), { nil: undefined, freq: 2 }),
  });

const scenario = fc
  .array(fc.record({ agent: fc.constantFrom(...AGENTS), traffic: fc.constantFrom(...TRAFFICS), createdAt: instant }), { minLength: 1, maxLength: 10 })
  .chain((recs) =>
    fc.record({
      recs: fc.constant(recs),
      before: fc.array(lifecycleEvent(recs.length), { minLength: 1, maxLength: 24 }),
      after: fc.array(lifecycleEvent(recs.length), { maxLength: 16 }),
      // A late `generated` with an ad and a product for each of these recommendations, after the cut.
      late: fc.array(fc.record({ rec: fc.integer({ min: 0, max: recs.length - 1 }), ad: fc.constantFrom(...ADS), product: fc.constantFrom(...PRODUCTS) }), { minLength: 1, maxLength: 6 }),
      entries: fc.array(
        fc.record({ rec: fc.integer({ min: 0, max: recs.length }), amount: fc.integer({ min: -2_000_000, max: 5_000_000 }), currency: fc.constantFrom('USD', 'USD', 'USD', 'EUR', null), after: fc.boolean() }),
        { maxLength: 10 },
      ),
      zones: fc.record({ agent_a: fc.constantFrom(...ZONES), agent_b: fc.constantFrom(...ZONES) }),
      seed: fc.integer(),
    }),
  );

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;
type Lifecycle = Scenario['before'][number];

/** The events before the cut and those after it. */
function buildEvents(s: Scenario): { subject: string; event: BreakdownModelEvent }[][] {
  const phases: { subject: string; event: BreakdownModelEvent }[][] = [[], []];
  let n = 0;
  const recommendation = (phase: number, l: Pick<Lifecycle, 'rec' | 'kind' | 'billable' | 'ad' | 'product'>) => {
    const rec = s.recs[l.rec];
    phases[phase].push({
      subject: `events.recommendation.${l.kind}`,
      event: {
        type: 'recommendation',
        kind: l.kind,
        event_id: `evt_${n++}`,
        recommendation_id: `rec_${l.rec}`,
        agent_id: rec.agent,
        traffic: rec.traffic,
        recommendation_created_at: rec.createdAt.toISOString(),
        billable: l.billable,
        ...(l.ad === undefined ? {} : { ad_id: l.ad }),
        ...(l.product === undefined ? {} : { product_id: l.product }),
      },
    });
  };
  s.before.forEach((l) => recommendation(0, l));
  s.after.forEach((l) => recommendation(1, l));
  s.late.forEach((l) => recommendation(1, { ...l, kind: 'generated', billable: false }));
  s.entries.forEach((e, i) => {
    const rec = s.recs[e.rec] ?? s.recs[0];
    phases[e.after ? 1 : 0].push({
      subject: 'events.accounting.entry',
      event: { type: 'accounting', entry_id: `acc_${i}`, agent_id: rec.agent, traffic: rec.traffic, recommendation_id: `rec_${e.rec}`, amount_micros: e.amount, currency: e.currency },
    });
  });
  return phases;
}

/** The previous layout by its definition: per dimension, id and hour of creation, the figures of the stored recommendations with that id. */
const PREVIOUS_LAYOUT = `
  SELECT agent_id, traffic, d.dimension, bucket, id, ${FIGURES.split(', ')
    .map((c) => `sum(${c})::bigint AS ${c}`)
    .join(', ')}
    FROM (SELECT agent_id, traffic, date_bin('1 hour', created_at, timestamptz '1970-01-01 00:00:00+00') AS bucket, COALESCE(ad_id, '') AS ad, COALESCE(product_id, '') AS product,
                 (level >= 1)::int AS exposures, (level >= 2)::int AS clicks, (level = 3)::int AS engagements, (level = 4)::int AS conversions,
                 CASE WHEN foreign_currency_entries > 0 THEN 0 ELSE attributed_usd_micros END AS earnings_micros
            FROM reporting.recommendation WHERE level >= 0) r
    CROSS JOIN LATERAL (VALUES ('ad', r.ad), ('product', r.product)) AS d(dimension, id)
   GROUP BY 1, 2, 3, 4, 5`;
const NON_ZERO = FIGURES.split(', ')
  .map((c) => `${c} <> 0`)
  .join(' OR ');
const ordered = (sql: string) => `SELECT agent_id, traffic, dimension, bucket, id, ${FIGURES} FROM (${sql}) x WHERE ${NON_ZERO} ORDER BY 1, 2, 3, 4, 5`;

describe('breakdowns across the cut to one row per (ad, product) pair', () => {
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

  const lastMigration = async () => ((await dataSource.query(`SELECT name FROM reporting.migrations ORDER BY id DESC LIMIT 1`)) as { name: string }[])[0].name;
  /** Back to the layout before the pairs: the archive's migration (nothing folded here) and the pairs' own. */
  const undoPairs = async () => {
    await dataSource.undoLastMigration();
    await dataSource.undoLastMigration();
  };

  async function apply(messages: InboundMessage[], seed: number): Promise<InboundMessage[][]> {
    // A projection started after the migration: its partition cache starts empty.
    const projection = new ProjectionService(new ProjectionRepository(dataSource, new StoragePartitions(dataSource, () => PROCESSED_THROUGH.getTime()), 32), 2);
    const batches = deliveryPlan(messages, seed);
    for (const batch of batches) {
      const outcomes = await projection.applyBatch(batch);
      expect(outcomes.every((o) => o.kind === 'applied')).toBe(true);
    }
    return batches;
  }

  it('gives the reference breakdowns of every event, before and after the cut, and keeps every previous row', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await lastMigration()).toBe('ReportingBreakdownArchive1795940000000');
        for (const table of ['recommendation', 'accounting_entry', 'rollup_minute', 'rollup_quarter', 'rollup_hour', 'rollup_day', 'breakdown_rollup', 'breakdown_pair', 'platform_timezone']) {
          await dataSource.query(`DELETE FROM reporting.${table}`);
        }
        for (const [agent, zone] of Object.entries(s.zones)) await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, $2, now())`, [agent, zone]);
        const phases = buildEvents(s);
        const bySequence = new Map<number, BreakdownModelEvent>();
        let sequence = 0;
        const messages = phases.map((events) =>
          events.map(({ subject, event }): InboundMessage => {
            bySequence.set(++sequence, event);
            return { subject, data: encoder.encode(JSON.stringify(breakdownEventPayload(event, PROCESSED_THROUGH))), sequence, deliveries: 1 };
          }),
        );

        // Before the cut: the previous layout, as its code wrote it.
        const first = await apply(messages[0], s.seed);
        await undoPairs();
        expect(await lastMigration()).toBe('ReportingBreakdowns1795920000000');
        const previous = await dataSource.query(ordered(`SELECT * FROM reporting.breakdown_rollup`));
        expect(previous).toEqual(await dataSource.query(ordered(PREVIOUS_LAYOUT)));
        const kept = await dataSource.query(`SELECT * FROM reporting.breakdown_rollup ORDER BY agent_id, traffic, dimension, bucket, id`);

        // The migration: every row of the previous layout kept, none written into the pairs.
        await dataSource.runMigrations();
        expect(await lastMigration()).toBe('ReportingBreakdownArchive1795940000000');
        expect(await dataSource.query(`SELECT * FROM reporting.breakdown_rollup ORDER BY agent_id, traffic, dimension, bucket, id`)).toEqual(kept);
        expect(await dataSource.query(`SELECT count(*)::int AS n FROM reporting.breakdown_pair`)).toEqual([{ n: 0 }]);

        // After the cut: more events, late `generated` ones among them; the previous rows are never written again.
        const second = await apply(messages[1], s.seed + 1);
        expect(await dataSource.query(`SELECT * FROM reporting.breakdown_rollup ORDER BY agent_id, traffic, dimension, bucket, id`)).toEqual(kept);

        const seen = new Set<number>();
        const modelEvents: BreakdownModelEvent[] = [];
        for (const batch of [...first, ...second]) {
          for (const message of [...batch].sort((a, b) => a.sequence - b.sequence)) {
            if (seen.has(message.sequence)) continue;
            seen.add(message.sequence);
            modelEvents.push(bySequence.get(message.sequence)!);
          }
        }
        const scopes = AGENTS.flatMap((agentId) => TRAFFICS.flatMap((traffic) => TIME_RANGES.map((timeRange) => ({ agentId, traffic, timeRange }))));
        const breakdownScopes = scopes.flatMap((scope) => BREAKDOWN_BYS.map((by) => ({ ...scope, by })));
        const { snapshots, built } = await dataSource.transaction('REPEATABLE READ', async (manager) => ({
          snapshots: await reports.build(scopes, PROCESSED_THROUGH, new Date(), manager),
          built: await breakdowns.build(breakdownScopes, PROCESSED_THROUGH, new Date(), manager),
        }));
        for (const one of built) {
          const period = reportPeriod(one.timeRange, PROCESSED_THROUGH, s.zones[one.agentId as 'agent_a' | 'agent_b']);
          const scope = `${one.agentId}/${one.traffic}/${one.timeRange}/${one.by}`;
          const report = snapshots.find((r) => r.agentId === one.agentId && r.traffic === one.traffic && r.timeRange === one.timeRange)!;
          expect({ scope, ...one.totals }).toEqual({ scope, ...Object.fromEntries(SERIES_FIGURES.map((name) => [name, report[name]])) });
          for (const sort of BREAKDOWN_SORTS) {
            const expected = referenceBreakdown(modelEvents, { agent_id: one.agentId, traffic: one.traffic as 'live' | 'test', start: period.start, end: period.end }, one.by, sort);
            expect({ scope, sort, rows: one.tops[sort] }).toEqual({ scope, sort, rows: expected.slice(0, 100) });
          }
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 25) },
    );
  });

  it('the late generated events of recommendations counted before the cut move them from unattributed to their ad and product', async () => {
    // One recommendation shown and clicked before the cut, attributed after it.
    for (const table of ['recommendation', 'accounting_entry', 'rollup_minute', 'rollup_quarter', 'rollup_hour', 'rollup_day', 'breakdown_rollup', 'breakdown_pair', 'platform_timezone']) {
      await dataSource.query(`DELETE FROM reporting.${table}`);
    }
    const createdAt = new Date(PROCESSED_THROUGH.getTime() - 3 * 3_600_000).toISOString();
    const event = (sequence: number, kind: string, extra: object = {}): InboundMessage => ({
      subject: `events.recommendation.${kind}`,
      sequence,
      deliveries: 1,
      data: encoder.encode(
        JSON.stringify({ event_id: `evt_${sequence}`, recommendation_id: 'rec_late', agent_id: 'agent_a', traffic: 'live', recommendation_created_at: createdAt, occurred_at: createdAt, billable: false, ...extra }),
      ),
    });
    await apply([event(1, 'generated'), event(2, 'shown'), event(3, 'clicked')], 1);
    await undoPairs();
    await dataSource.runMigrations();
    await apply([event(4, 'generated', { ad_id: 'ad_9', product_id: 'prod_9' })], 1);
    const built = await breakdowns.build(
      BREAKDOWN_BYS.map((by) => ({ agentId: 'agent_a', traffic: 'live', timeRange: '1d' as const, by })),
      PROCESSED_THROUGH,
      new Date(),
    );
    expect(built.map((one) => one.tops.clicks.map((row) => [row.id, row.exposures, row.clicks]))).toEqual([[['ad_9', 1, 1]], [['prod_9', 1, 1]]]);
    // The legacy rows keep the unattributed figures; the pair rows take them out again.
    expect(await dataSource.query(`SELECT dimension, id, exposures::int, clicks::int FROM reporting.breakdown_rollup ORDER BY dimension`)).toEqual([
      { dimension: 'ad', id: '', exposures: 1, clicks: 1 },
      { dimension: 'product', id: '', exposures: 1, clicks: 1 },
    ]);
    expect(await dataSource.query(`SELECT ad_id, product_id, exposures::int, clicks::int FROM reporting.breakdown_pair ORDER BY exposures`)).toEqual([
      { ad_id: '', product_id: '', exposures: -1, clicks: -1 },
      { ad_id: 'ad_9', product_id: 'prod_9', exposures: 1, clicks: 1 },
    ]);
  });
});
