import { createServiceDataSource, initializeDatabase } from '#libs/database';
import type { DataSource } from 'typeorm';
import { ReportingInitial1764115200000 } from '../../apps/reporting-projection/src/database/migrations/1764115200000-reporting-initial.js';
import { ReportingSeries1795740000001 } from '../../apps/reporting-projection/src/database/migrations/1795740000001-reporting-series.js';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { StoragePartitions, WEEK_MS, weekStart } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { newTestDatabase, type TestDatabase } from '../support/index.js';

/**
 * The partitioned layout of the reporting store: a store filled in the previous layout (through
 * the previous migrations) keeps every row through the migration, each in the weekly partition of
 * its creation time, and the down migration gives them back; the service makes weeks ahead and on
 * demand.
 */

const DAY = 86_400_000;
/** Creation times over several weeks and years, including a Monday 00:00 UTC edge. */
const TIMES = ['2024-03-10T05:00:00Z', '2024-03-11T00:00:00Z', '2024-03-17T23:59:00Z', '2026-11-25T10:15:00Z', '2026-12-31T23:59:00Z'].map(Date.parse);

const TABLES = {
  recommendation: `SELECT recommendation_id, agent_id, traffic, created_at, level, billable, attributed_entries, attributed_usd_micros::text,
                          foreign_currency_entries FROM reporting.recommendation WHERE agent_id IS NOT NULL ORDER BY recommendation_id`,
  accounting_entry: `SELECT entry_id, agent_id, traffic, recommendation_id, amount_micros::text, currency, recorded_at, attributed
                     FROM reporting.accounting_entry ORDER BY entry_id`,
  rollup_minute: `SELECT agent_id, traffic, bucket, exposures::text, clicks::text, engagements::text, conversions::text, earnings_micros::text,
                         earnings_excluded_recommendations::text, pending_earnings_recommendations::text, accounting_review_required::text
                  FROM reporting.rollup_minute ORDER BY agent_id, traffic, bucket`,
};

async function contents(dataSource: DataSource): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const [table, sql] of Object.entries(TABLES)) result[table] = await dataSource.query(sql);
  return result;
}

async function fillPreviousLayout(dataSource: DataSource): Promise<void> {
  await dataSource.query(
    `INSERT INTO reporting.recommendation
     SELECT 'rec_' || i, 'agent_' || (i % 3), CASE WHEN i % 2 = 0 THEN 'live' ELSE 'test' END, t, (i % 5)::smallint, i % 2 = 0, i % 3, i * 1000, i % 2
       FROM unnest($1::timestamptz[]) WITH ORDINALITY AS x(t, i)`,
    [TIMES.map((t) => new Date(t).toISOString())],
  );
  // A recommendation only named by an accounting entry so far: no identity, nothing counted.
  await dataSource.query(`INSERT INTO reporting.recommendation (recommendation_id) VALUES ('rec_unknown')`);
  await dataSource.query(
    `INSERT INTO reporting.accounting_entry
     SELECT 'acc_' || i, 'agent_' || (i % 3), 'live', CASE WHEN i = 1 THEN 'rec_unknown' WHEN i = 2 THEN NULL ELSE 'rec_' || i END,
            (i * 250000 - 600000), CASE WHEN i = 3 THEN NULL ELSE 'USD' END, t + interval '1 hour', i > 2
       FROM unnest($1::timestamptz[]) WITH ORDINALITY AS x(t, i)`,
    [TIMES.map((t) => new Date(t).toISOString())],
  );
  await dataSource.query(
    `INSERT INTO reporting.rollup_minute (agent_id, traffic, bucket, exposures, clicks, engagements, conversions, earnings_micros,
       earnings_excluded_recommendations, pending_earnings_recommendations, accounting_review_required)
     SELECT 'agent_' || (i % 3), 'live', date_trunc('minute', t) + m * interval '1 minute', i, m, 1, 0, i * m * 1000, 0, m % 2, 1
       FROM unnest($1::timestamptz[]) WITH ORDINALITY AS x(t, i), generate_series(0, 2) AS m`,
    [TIMES.map((t) => new Date(t).toISOString())],
  );
}

let db: TestDatabase;
let dataSource: DataSource;
let before: Record<string, unknown[]>;

beforeAll(async () => {
  db = newTestDatabase();
  const previous = createServiceDataSource({
    url: db.url,
    schema: 'reporting',
    entities: [],
    migrations: [ReportingInitial1764115200000, ReportingSeries1795740000001],
    poolSize: 2,
    applicationName: 'reporting-partitioning-test',
  });
  await initializeDatabase(previous);
  await fillPreviousLayout(previous);
  before = await contents(previous);
  await previous.destroy();
  dataSource = createReportingDataSource(db.url, 2);
  await initializeDatabase(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
  await db?.drop();
});

it('carries every row of the previous layout over, each in the weekly partition of its creation time', async () => {
  expect(before.recommendation).toHaveLength(TIMES.length);
  expect(before.rollup_minute).toHaveLength(TIMES.length * 3);
  expect(await contents(dataSource)).toEqual(before);

  const partitioned: { relname: string }[] = await dataSource.query(
    `SELECT c.relname FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'reporting' ORDER BY 1`,
  );
  expect(partitioned.map((r) => r.relname)).toEqual(['accounting_entry', 'breakdown_pair', 'breakdown_rollup', 'recommendation', 'rollup_minute', 'rollup_quarter']);
  // Each row sits in the partition named by the Monday (UTC) of its creation time.
  const placed: { partition: string; created_at: Date }[] = await dataSource.query(
    `SELECT tableoid::regclass::text AS partition, created_at FROM reporting.recommendation`,
  );
  for (const row of placed) {
    const monday = new Date(weekStart(row.created_at.getTime())).toISOString().slice(0, 10).replace(/-/g, '');
    expect(row.partition).toBe(`reporting.recommendation_w${monday}`);
    expect(new Date(weekStart(row.created_at.getTime())).getUTCDay()).toBe(1);
  }
  // 2024-03-10 (a Sunday) and 2024-03-11 (the Monday after) are in different weeks.
  expect(new Set(placed.map((r) => r.partition)).size).toBe(4);
});

it('makes the current week and the next ones ahead of time, and a week a batch needs on demand', async () => {
  const now = Date.parse('2031-06-18T12:00:00Z');
  const partitions = new StoragePartitions(dataSource, () => now);
  const count = async (table: string) =>
    Number(
      (
        await dataSource.query(`SELECT count(*) AS n FROM pg_inherits WHERE inhparent = $1::regclass`, [`reporting.${table}`])
      )[0].n,
    );
  const initially = await count('rollup_minute');
  // Three weeks of each partitioned table (breakdown_pair's by reporting.ensure_breakdown_partitions; the legacy breakdown_rollup gets no new week).
  expect(await partitions.ensureAhead()).toBe(3 * 4);
  expect(await count('rollup_minute')).toBe(initially + 3);
  expect(await partitions.ensureAhead()).toBe(0);
  // A backfill of events from a week never seen: made before the batch writes; a week wholly
  // past the restatement window (120 days by default) is not made again.
  await partitions.ensureFor([Date.parse('2031-03-05T08:00:00Z'), Date.parse('2031-03-06T08:00:00Z'), Date.parse('2031-01-08T08:00:00Z')]);
  expect(await count('accounting_entry')).toBe(initially + 4);
  await dataSource.query(`INSERT INTO reporting.accounting_entry VALUES ('acc_backfill', 'agent_1', 'live', NULL, 1, 'USD', '2031-03-05T08:00:00Z', false)`);
  expect(partitions.restatementHorizon()).toBe(now - 120 * DAY);
  expect(weekStart(now + WEEK_MS) - weekStart(now)).toBe(7 * DAY);
});

it('the down migration takes the store back to the previous layout with the same rows', async () => {
  const now = await contents(dataSource);
  // The migrations after the partitioned layout first, then the partitioned layout itself.
  const last = async () => ((await dataSource.query(`SELECT name FROM reporting.migrations ORDER BY id DESC LIMIT 1`)) as { name: string }[])[0].name;
  while ((await last()) !== 'ReportingPartitioned1795800000000') await dataSource.undoLastMigration();
  await dataSource.undoLastMigration();
  const partitioned: unknown[] = await dataSource.query(`SELECT 1 FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid WHERE c.relnamespace = 'reporting'::regnamespace`);
  expect(partitioned).toHaveLength(0);
  expect(await contents(dataSource)).toEqual(now);
  await dataSource.runMigrations();
  expect(await contents(dataSource)).toEqual(now);
});
