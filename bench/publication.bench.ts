/**
 * Publication benchmark: synthesize rollups with set-based SQL for 5,000 platforms × 2 traffics
 * (day rows for 100 days, hour rows for the last 2 days, minute rows for the last 2 hours, laid
 * down in time order as the projection appends them), register 10,000 scopes × 6 time ranges =
 * 60,000 report scopes, then time `PublicationService.runCycle(true)` over 3 cycles in an
 * in-process reporting-projection (its own timer set to an hour, so only the benchmark
 * publishes). Then a breakdown of one cycle's phases and the EXPLAIN (ANALYZE, BUFFERS) of one
 * platform's 90d rollup query.
 *
 *   npm run bench:publication            (PLATFORMS=500 npm run bench:publication for a quick run)
 */
import pg from 'pg';
import { DataSource } from 'typeorm';
import { TIME_RANGES, type TimeRange } from '#libs/contracts';
import { PublicationService } from '../apps/reporting-projection/src/publication/publication.service.js';
import { RollupQueryRepository } from '../apps/reporting-projection/src/publication/rollup-query.repository.js';
import { SnapshotBuilder } from '../apps/reporting-projection/src/publication/snapshot-builder.service.js';
import { SnapshotRepository } from '../apps/reporting-projection/src/publication/snapshot.repository.js';
import type { Snapshot } from '../apps/reporting-projection/src/publication/snapshot.js';
import { reportPeriod, DAY_MS, HOUR_MS, MINUTE_MS } from '../apps/reporting-projection/src/rules/periods.js';
import { decomposePeriod, type BucketRange } from '../apps/reporting-projection/src/rules/rollup-ranges.js';
import { newTestDatabase, startNats, startReportingProjection } from '../test/support/index.js';
import { fmt, machine } from './support.js';

const PLATFORMS = Number(process.env.PLATFORMS ?? 5000);
const DAYS = 100;
const HOURS = 48;
const MINUTES = 120;
const CYCLES = Number(process.env.CYCLES ?? 3);
const TARGET_SECONDS = 10;
/** Half the platforms set a reporting timezone (spread over these), the rest stay on UTC. */
const TIMEZONES = ['America/New_York', 'America/Los_Angeles', 'Europe/London', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu', 'Asia/Tokyo', 'Australia/Sydney'];

const DENSE_AGENT = 'agent_dense';
const agentSql = `'agent_' || lpad(p::text, 5, '0')`;
const COUNTERS = `exposures, clicks, engagements, conversions, earnings_micros, earnings_excluded_recommendations,
  pending_earnings_recommendations, accounting_review_required`;

/**
 * One grain's rows: `steps` buckets back from `newest`, every platform and traffic, oldest
 * bucket first (the order the projection appends them). Counters vary per platform and bucket;
 * test traffic is a seventh of live.
 */
function rollupInsert(grain: 'day' | 'hour' | 'minute', steps: number, scale: number): string {
  return `INSERT INTO reporting.rollup_${grain} (agent_id, traffic, bucket, ${COUNTERS})
    SELECT ${agentSql}, t.traffic, $1::timestamptz - s * interval '1 ${grain}',
      x.e, x.e / 8, x.e / 40, x.e / 60, (x.e / 8) * 150000 + p, x.e / 500, x.e / 300, x.e / 1000
    FROM generate_series(${steps - 1}, 0, -1) s
    CROSS JOIN generate_series(0, $2::int - 1) p
    CROSS JOIN (VALUES ('live', 1), ('test', 7)) t(traffic, divisor)
    CROSS JOIN LATERAL (SELECT (${scale} + (p * 37 + s * 101) % (4 * ${scale})) / t.divisor AS e) x
    ORDER BY s DESC, p, t.traffic`;
}

async function synthesize(url: string, now: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const newest = { day: Math.floor(now / DAY_MS) * DAY_MS, hour: Math.floor(now / HOUR_MS) * HOUR_MS, minute: Math.floor(now / MINUTE_MS) * MINUTE_MS };
    const started = Date.now();
    for (const [grain, steps, scale] of [['day', DAYS, 2000], ['hour', HOURS, 100], ['minute', MINUTES, 2]] as const) {
      const { rowCount } = await client.query(rollupInsert(grain, steps, scale), [new Date(newest[grain]).toISOString(), PLATFORMS]);
      console.log(`  rollup_${grain}: ${fmt(rowCount ?? 0)} rows`);
    }
    const { rowCount: scopes } = await client.query(
      `INSERT INTO reporting.report_scope (agent_id, traffic, time_range)
       SELECT ${agentSql}, t, r FROM generate_series(0, $1::int - 1) p, unnest(ARRAY['live', 'test']) t, unnest($2::text[]) r`,
      [PLATFORMS, [...TIME_RANGES]],
    );
    const { rowCount: zones } = await client.query(
      `INSERT INTO reporting.platform_timezone (agent_id, timezone, updated_at)
       SELECT ${agentSql}, ($2::text[])[1 + p / 2 % array_length($2::text[], 1)], now() FROM generate_series(0, $1::int - 1) p WHERE p % 2 = 0`,
      [PLATFORMS, TIMEZONES],
    );
    await client.query(
      `INSERT INTO reporting.reconciliation_watermark (traffic, agent_id, reconciled_through) VALUES ('live', '', $1), ('test', '', $1)`,
      [new Date(now - DAY_MS).toISOString()],
    );
    // One more platform with a row in every bucket (every minute of 91 days), not a registered
    // scope: it shows how the same query reads dense history.
    for (const [grain, steps] of [['day', DAYS], ['hour', 91 * 24], ['minute', 91 * 24 * 60]] as const) {
      await client.query(
        `INSERT INTO reporting.rollup_${grain} (agent_id, traffic, bucket, ${COUNTERS})
         SELECT $3, 'live', $1::timestamptz - s * interval '1 ${grain}', 1, 1, 0, 0, 1000, 0, 0, 0 FROM generate_series($2::int - 1, 0, -1) s`,
        [new Date(newest[grain]).toISOString(), steps, DENSE_AGENT],
      );
    }
    console.log(`  report_scope: ${fmt(scopes ?? 0)} rows; platform_timezone: ${fmt(zones ?? 0)} rows (${TIMEZONES.length} zones)`);
    await client.query('VACUUM (ANALYZE) reporting.rollup_day, reporting.rollup_hour, reporting.rollup_minute, reporting.report_scope, reporting.platform_timezone');
    console.log(`  synthesized and vacuumed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows each rollup table's scans produced or discarded (EXPLAIN reports per-loop averages). */
function rowsRead(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  if (node['Relation Name']?.startsWith('rollup_')) {
    const loops = node['Actual Loops'] ?? 1;
    const rows = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops;
    into.set(node['Relation Name'], (into.get(node['Relation Name']) ?? 0) + rows);
  }
  for (const child of node.Plans ?? []) rowsRead(child, into);
  return into;
}

const buckets = (list: BucketRange[], unit: number) => list.reduce((n, r) => n + (r.from ? (r.to.getTime() - r.from.getTime()) / unit : 0), 0);

async function main() {
  console.log(`machine: ${machine()}`);
  const nats = await startNats();
  const db = newTestDatabase();
  try {
    const service = await startReportingProjection({ natsUrl: nats.url, databaseUrl: db.url, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000 });
    const dataSource = service.app.get(DataSource);
    const publication = service.app.get(PublicationService);
    // Let the start-up cycle (1 s after start, no scopes yet) pass so it cannot hold the lock.
    await new Promise((r) => setTimeout(r, 1500));

    console.log(`synthesizing ${fmt(PLATFORMS)} platforms × 2 traffics: ${DAYS} day, ${HOURS} hour, ${MINUTES} minute rows each`);
    await synthesize(db.url, Date.now());

    const cycles: { seconds: number; snapshots: number }[] = [];
    for (let i = 0; i < CYCLES; i++) {
      const started = performance.now();
      const outcome = await publication.runCycle(true);
      const seconds = (performance.now() - started) / 1000;
      if (outcome !== 'published') throw new Error(`cycle ${i + 1}: ${outcome}`);
      const [{ n }] = await dataSource.query(
        `SELECT count(*)::int AS n FROM reporting.report_snapshot WHERE updated_at = (SELECT last_started_at FROM reporting.publication_state WHERE id = 1)`,
      );
      cycles.push({ seconds, snapshots: n });
      console.log(`  cycle ${i + 1}: ${seconds.toFixed(2)} s, ${fmt(n)} snapshots written`);
    }

    // Where one cycle's time goes: the same steps runCycle takes, timed one by one.
    const [{ processed_through: processedThrough }] = await dataSource.query(`SELECT processed_through FROM reporting.publication_state WHERE id = 1`);
    const snapshots = service.app.get(SnapshotRepository);
    const builder = service.app.get(SnapshotBuilder);
    let t = performance.now();
    const scopes = await snapshots.allScopes();
    const loadSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    const built: Snapshot[] = await builder.build(scopes, processedThrough, new Date());
    const buildSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    await dataSource.transaction((manager) => snapshots.save(built, manager));
    const saveSeconds = (performance.now() - t) / 1000;

    // One platform's 90d report, and the same for the dense platform.
    const period = reportPeriod('90d' as TimeRange, processedThrough, 'UTC');
    const ranges = decomposePeriod(period);
    const dense = { day: buckets(ranges.days, DAY_MS), hour: buckets(ranges.hours, HOUR_MS), minute: buckets(ranges.minutes, MINUTE_MS) };
    const explain = async (agentId: string) => {
      const lines: string[] = [];
      const read = new Map<string, number>();
      for (const scan of RollupQueryRepository.buildScans([period], [{ agentId, traffic: 'live' }])) {
        const plan: { 'QUERY PLAN': string }[] = await dataSource.query(`EXPLAIN (ANALYZE, BUFFERS) ${scan.sql}`, scan.parameters);
        const [{ 'QUERY PLAN': json }] = await dataSource.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${scan.sql}`, scan.parameters);
        for (const [table, rows] of rowsRead((json as { Plan: PlanNode }[])[0].Plan)) read.set(table, (read.get(table) ?? 0) + rows);
        lines.push(`-- scan of rollup_${scan.grain} below ${scan.to.toISOString()}`, ...plan.map((row) => row['QUERY PLAN']));
      }
      return { agentId, plan: lines, days: read.get('rollup_day') ?? 0, hours: read.get('rollup_hour') ?? 0, minutes: read.get('rollup_minute') ?? 0 };
    };
    const explained = [await explain('agent_00042'), await explain(DENSE_AGENT)];

    await service.close();

    const average = cycles.reduce((s, c) => s + c.seconds, 0) / cycles.length;
    const worst = Math.max(...cycles.map((c) => c.seconds));
    console.log('');
    console.log(`publication of ${fmt(scopes.length)} scopes (${fmt(PLATFORMS)} platforms × 2 traffics × ${TIME_RANGES.length} ranges), ${CYCLES} cycles of runCycle(true):`);
    console.log(`  ${cycles.map((c) => `${c.seconds.toFixed(2)} s`).join(', ')} per cycle (average ${average.toFixed(2)} s); snapshots written ${cycles.map((c) => fmt(c.snapshots)).join(', ')}`);
    console.log(`  target ≤ ${TARGET_SECONDS} s per cycle: ${worst <= TARGET_SECONDS ? 'met' : 'NOT met'}`);
    console.log(`  one cycle's steps timed separately: load scopes ${loadSeconds.toFixed(2)} s; build all ${fmt(built.length)} snapshots ${buildSeconds.toFixed(2)} s; save ${fmt(built.length)} snapshots ${saveSeconds.toFixed(2)} s`);
    console.log('');
    for (const [i, e] of explained.entries()) {
      console.log(`EXPLAIN (ANALYZE, BUFFERS) of RollupQueryRepository.buildScans(90d ending ${processedThrough.toISOString()}, [${e.agentId}/live])` +
        (i === 0 ? ':' : ' — the dense platform (a row in every minute, hour and day), not part of the cycle:'));
      for (const line of e.plan) console.log(`  ${line}`);
      console.log(
        `rollup rows read for ${e.agentId}: ${fmt(e.days + e.hours + e.minutes)} (${fmt(e.days)} days + ${fmt(e.hours)} hours + ${fmt(e.minutes)} minutes); ` +
          `the period's buckets: ${fmt(dense.day + dense.hour + dense.minute)} (${dense.day} + ${dense.hour} + ${dense.minute}); a naive minute query reads 129,600`,
      );
      console.log('');
    }
  } finally {
    await nats.stop();
    await db.drop();
  }
}

await main();
