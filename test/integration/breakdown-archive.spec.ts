import type { DataSource } from 'typeorm';
import { initializeDatabase } from '#libs/database';
import { BREAKDOWN_BYS, TIME_RANGES } from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { BREAKDOWN_EDGE_DAYS, DAY_MS, StoragePartitions, WEEK_MS } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { BreakdownBuilder } from '../../apps/reporting-projection/src/publication/breakdown-builder.service.js';
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { newTestDatabase, type TestDatabase } from '../support/index.js';
import { prng } from '../support/prng.js';
import { breakdownEventPayload, referenceBreakdown, type BreakdownModelEvent } from '../support/reference-breakdown.js';

/**
 * The fold of old breakdown weeks (StoragePartitions.foldBreakdowns, migration
 * ReportingBreakdownArchive1795940000000) against the reference: a store with 17 weeks of
 * breakdown rows, folded once the newest published cutoff has moved on, gives every breakdown of
 * every range the reference rows, keeps only the weeks at or after the bound, and stays exact
 * through the migration's down (the archive back into pair rows) and up again, and a second fold
 * by a maintenance run whose first step fails. A fold before any publication folds nothing, and
 * replicas folding together fold each week once.
 */
const START = Date.parse('2031-03-03T00:00:00Z'); // a Monday
const AGENTS = ['agent_arc_a', 'agent_arc_b'] as const;
const TRAFFICS = ['live', 'test'] as const;
const ADS = ['ad_1', 'ad_2', 'ad_3', 'ad_10'];
const PRODUCTS = ['prod_x', 'prod_y'];
const KINDS = ['generated', 'shown', 'clicked', 'engaged', 'converted'] as const;
const encoder = new TextEncoder();

let db: TestDatabase;
let dataSource: DataSource;

beforeAll(async () => {
  db = newTestDatabase();
  dataSource = createReportingDataSource(db.url, 4);
  await initializeDatabase(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
  await db?.drop();
});

it('folds old breakdown weeks into one row per pair, exactly, through the migration and back', async () => {
  let now = START + 17 * WEEK_MS;
  const partitions = new StoragePartitions(dataSource, () => now);
  const projection = new ProjectionService(new ProjectionRepository(dataSource, partitions), 2);
  const breakdowns = new BreakdownBuilder(dataSource);
  const next = prng(7);

  // 400 recommendations over 17 weeks, each with a first event and most with a `generated` naming its ad and product.
  const events: BreakdownModelEvent[] = [];
  for (let i = 0; i < 400; i++) {
    const base = {
      recommendation_id: `rec_arc_${i}`,
      agent_id: AGENTS[Math.floor(next() * AGENTS.length)],
      traffic: TRAFFICS[Math.floor(next() * TRAFFICS.length)],
      recommendation_created_at: new Date(START + Math.floor(next() * 17 * WEEK_MS)).toISOString(),
    };
    const kind = KINDS[Math.floor(next() * KINDS.length)];
    events.push({ type: 'recommendation', kind, event_id: `evt_arc_${i}_a`, ...base, billable: next() < 0.5 });
    if (next() < 0.8) {
      events.push({ type: 'recommendation', kind: 'generated', event_id: `evt_arc_${i}_g`, ...base, ad_id: ADS[Math.floor(next() * ADS.length)], product_id: PRODUCTS[Math.floor(next() * PRODUCTS.length)] });
    }
    if (next() < 0.3) {
      events.push({ type: 'accounting', entry_id: `acc_arc_${i}`, agent_id: base.agent_id, traffic: base.traffic, recommendation_id: base.recommendation_id, amount_micros: Math.floor(next() * 1_000_000), currency: 'USD' });
    }
  }
  const messages: InboundMessage[] = events.map((event, i) => {
    const subject = event.type === 'accounting' ? 'events.accounting.entry' : `events.recommendation.${(event as { kind: string }).kind}`;
    const created = event.type === 'accounting' ? events.find((e) => e.type === 'recommendation' && e.recommendation_id === event.recommendation_id) : event;
    const recordedAt = new Date(Date.parse((created as { recommendation_created_at: string }).recommendation_created_at));
    return { subject, sequence: i + 1, deliveries: 1, data: encoder.encode(JSON.stringify(breakdownEventPayload(event, recordedAt))) };
  });
  for (let i = 0; i < messages.length; i += 250) {
    expect((await projection.applyBatch(messages.slice(i, i + 250))).every((o) => o.kind === 'applied')).toBe(true);
  }

  const scopes = AGENTS.flatMap((agentId) => TRAFFICS.flatMap((traffic) => TIME_RANGES.flatMap((timeRange) => BREAKDOWN_BYS.map((by) => ({ agentId, traffic, timeRange, by })))));
  const expectReference = async (when: string) => {
    for (const one of await breakdowns.build(scopes, new Date(now), new Date(now))) {
      const period = reportPeriod(one.timeRange, new Date(now), 'UTC');
      const expected = referenceBreakdown(events, { agent_id: one.agentId, traffic: one.traffic as 'live' | 'test', start: period.start, end: period.end }, one.by, 'earnings_micros');
      const scope = `${when}: ${one.agentId}/${one.traffic}/${one.timeRange}/${one.by}`;
      expect({ scope, rows: one.tops.earnings_micros }).toEqual({ scope, rows: expected });
    }
  };
  const pairWeeks = async () =>
    ((await dataSource.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'reporting.breakdown_pair'::regclass`)) as { n: number }[])[0].n;
  const archivedBefore = async () =>
    Number(((await dataSource.query(`SELECT extract(epoch FROM archived_before) * 1000 AS ms FROM reporting.breakdown_archive_window`)) as { ms: string }[])[0].ms);

  // Before any publication nothing is folded, however old.
  now += 60 * DAY_MS;
  expect(await partitions.foldBreakdowns()).toEqual([]);
  await expectReference('before any publication');
  const weeksBefore = await pairWeeks();

  // Published at `now`: the weeks that end by the earlier of now − BREAKDOWN_EDGE_DAYS and the restatement horizon
  // (less a day) are folded, by two replicas at once, each week once.
  await dataSource.query(`UPDATE reporting.publication_state SET processed_through = $1 WHERE id = 1`, [new Date(now).toISOString()]);
  const limit = Math.min(now - BREAKDOWN_EDGE_DAYS * DAY_MS, partitions.restatementHorizon() - DAY_MS);
  expect(await partitions.breakdownFoldLimit()).toBe(limit);
  const other = new StoragePartitions(dataSource, () => now);
  const [one, two] = await Promise.all([partitions.foldBreakdowns(), other.foldBreakdowns()]);
  const folded = [...one, ...two];
  expect(new Set(folded).size).toBe(folded.length);
  expect(folded.length).toBeGreaterThanOrEqual(4);
  expect(await pairWeeks()).toBe(weeksBefore - folded.length);
  const bound = await archivedBefore();
  expect(bound).toBeLessThanOrEqual(limit);
  expect(bound).toBeGreaterThan(limit - WEEK_MS);
  const [{ early }] = await dataSource.query(`SELECT count(*)::int AS early FROM reporting.breakdown_pair WHERE bucket < $1`, [new Date(bound).toISOString()]);
  expect(early).toBe(0);
  const [{ pairs }] = await dataSource.query(`SELECT count(*)::int AS pairs FROM reporting.breakdown_archive WHERE ad_id <> ''`);
  expect(pairs).toBeGreaterThan(0);
  await expectReference('after the fold');

  // The migration's down puts the archive back as pair rows, its up starts an empty archive: the same answers.
  await dataSource.undoLastMigration();
  const [{ table }] = await dataSource.query(`SELECT to_regclass('reporting.breakdown_archive') AS table`);
  expect(table).toBeNull();
  await expectReferenceWithoutArchive();
  await dataSource.runMigrations();
  expect(await archivedBefore()).toBe(Number.NEGATIVE_INFINITY);
  await expectReference('after down and up');

  // Folded again (the week the down wrote included) by a maintenance run whose first step fails
  // (the function that makes weeks is gone): the later steps still run, and the run reports the failure.
  await dataSource.query(`ALTER FUNCTION reporting.ensure_breakdown_partitions(timestamptz[]) RENAME TO ensure_breakdown_partitions_gone`);
  try {
    await expect(partitions.maintain()).rejects.toThrow('1 of 4 steps failed');
  } finally {
    await dataSource.query(`ALTER FUNCTION reporting.ensure_breakdown_partitions_gone(timestamptz[]) RENAME TO ensure_breakdown_partitions`);
  }
  expect(await archivedBefore()).toBe(bound);
  const [{ left }] = await dataSource.query(`SELECT count(*)::int AS left FROM reporting.breakdown_pair WHERE bucket < $1`, [new Date(bound).toISOString()]);
  expect(left).toBe(0);
  await expectReference('after a second fold');

  /** Without the archive's tables the builder cannot run: the `all` sums are read straight from the pair rows. */
  async function expectReferenceWithoutArchive() {
    for (const agent of AGENTS) {
      for (const traffic of TRAFFICS) {
        const rows: { id: string; exposures: number; earnings_micros: number }[] = await dataSource.query(
          `SELECT ad_id AS id, sum(exposures)::int AS exposures, sum(earnings_micros)::int AS earnings_micros FROM reporting.breakdown_pair
            WHERE agent_id = $1 AND traffic = $2 AND bucket < $3 GROUP BY ad_id HAVING sum(exposures) <> 0 OR sum(earnings_micros) <> 0 ORDER BY ad_id COLLATE "C"`,
          [agent, traffic, new Date(Math.floor(now / 3_600_000) * 3_600_000).toISOString()],
        );
        const period = reportPeriod('all', new Date(Math.floor(now / 3_600_000) * 3_600_000), 'UTC');
        const expected = referenceBreakdown(events, { agent_id: agent, traffic, start: period.start, end: period.end }, 'ad', 'earnings_micros')
          .filter((row) => row.exposures !== 0 || row.earnings_micros !== 0)
          .map((row) => ({ id: row.id ?? '', exposures: row.exposures, earnings_micros: row.earnings_micros }))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        expect({ agent, traffic, rows }).toEqual({ agent, traffic, rows: expected });
      }
    }
  }
}, 120_000);
