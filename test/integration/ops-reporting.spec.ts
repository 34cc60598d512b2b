import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import { TIME_RANGES } from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { StoragePartitions } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { useMigratedDatabase } from '../support/index.js';

/**
 * `ops storage` and `ops reporting verify` (DESIGN §10) as child processes (the built dist/:
 * `npm run build` first) against a reporting store filled through the projection: verify agrees
 * with the rollups the projection wrote and, once a rollup is changed by hand, exits 1 naming the
 * figure and every range that holds the bucket.
 */
const CLI = resolve('dist/apps/ops/src/main.js');
const scratch = useMigratedDatabase((url) => createReportingDataSource(url, 2));
const encoder = new TextEncoder();
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
const AGENT = 'agent_verify';

function ops(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, DATABASE_URL: scratch.db.url }, timeout: 30000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let dataSource: DataSource;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  dataSource = scratch.dataSource;
  await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, 'Asia/Kathmandu', now())`, [AGENT]);
  await dataSource.query(`UPDATE reporting.publication_state SET processed_through = $1`, [new Date(NOW).toISOString()]);
  // Recommendations created over the last 100 days (every range sees some), with entries in USD and not.
  const messages: InboundMessage[] = [];
  const push = (subject: string, payload: object) => messages.push({ subject, sequence: messages.length + 1, deliveries: 1, data: encoder.encode(JSON.stringify(payload)) });
  for (let i = 0; i < 60; i++) {
    const created = new Date(NOW - Math.floor(((i * 37) % 100) * 86_400_000 + i * 611_000)).toISOString();
    const traffic = i % 3 === 0 ? 'test' : 'live';
    const rec = { recommendation_id: `rec_verify_${i}`, agent_id: AGENT, traffic, recommendation_created_at: created, occurred_at: created };
    push(`events.recommendation.${['shown', 'clicked', 'engaged', 'converted'][i % 4]}`, { ...rec, event_id: `evt_v_${i}`, billable: i % 5 === 0 });
    if (i % 4 === 1) {
      push('events.accounting.entry', { entry_id: `acc_v_${i}`, agent_id: AGENT, traffic, recommendation_id: i % 8 === 1 ? rec.recommendation_id : `rec_never_${i}`, amount_micros: 1_000_000 + i, currency: i % 12 === 1 ? 'EUR' : 'USD', recorded_at: created });
    }
  }
  const outcomes = await new ProjectionService(new ProjectionRepository(dataSource, new StoragePartitions(dataSource)), 1).applyBatch(messages);
  expect(outcomes.every((o) => o.kind === 'applied')).toBe(true);
  await dataSource.query('ANALYZE reporting.recommendation, reporting.accounting_entry, reporting.rollup_minute');
});

it('storage: each table of the reporting schema and each weekly partition, with sizes', async () => {
  const run = await ops(['storage']);
  expect(run.code).toBe(0);
  const out = JSON.parse(run.stdout) as { schema: string; total_bytes: number; tables: { table: string; partitioned: boolean; total_bytes: number; rows_estimate: number | null; partitions?: { partition: string; range: string; total_bytes: number }[] }[] };
  expect(out.schema).toBe('reporting');
  const byName = new Map(out.tables.map((t) => [t.table, t]));
  for (const name of ['recommendation', 'accounting_entry', 'rollup_minute']) {
    const table = byName.get(name)!;
    expect(table.partitioned).toBe(true);
    // 100 days of creation times: 15 or more weeks, each a partition with its range.
    expect(table.partitions!.length).toBeGreaterThanOrEqual(15);
    expect(table.partitions!.every((p) => p.partition.startsWith(`${name}_w`) && /^FOR VALUES FROM \('.*'\) TO \('.*'\)$/.test(p.range))).toBe(true);
    expect(table.total_bytes).toBe(table.partitions!.reduce((sum, p) => sum + p.total_bytes, 0));
  }
  expect(byName.get('recommendation')!.rows_estimate).toBe(60);
  expect(byName.get('rollup_day')!.partitioned).toBe(false);
  expect(byName.get('rollup_day')!.total_bytes).toBeGreaterThan(0);
  expect(out.total_bytes).toBe(out.tables.reduce((sum, t) => sum + t.total_bytes, 0));
});

it('reporting verify: the rollups agree with the state; a rollup changed by hand is found, exit 1', async () => {
  const clean = await ops(['reporting', 'verify', '--agent-id', AGENT]);
  expect(clean.stderr).toBe('');
  expect(clean.code).toBe(0);
  const ok = JSON.parse(clean.stdout) as { agent_id: string; checked: { traffic: string; time_range: string; figures: Record<string, number> }[]; mismatches: unknown[] };
  expect(ok.agent_id).toBe(AGENT);
  expect(ok.mismatches).toEqual([]);
  expect(ok.checked.map((c) => `${c.traffic}/${c.time_range}`)).toEqual(['live', 'test'].flatMap((t) => TIME_RANGES.map((r) => `${t}/${r}`)));
  const all = ok.checked.find((c) => c.traffic === 'live' && c.time_range === 'all')!.figures;
  expect(all.exposures).toBe(40);
  expect(all.accounting_review_required).toBeGreaterThan(0);
  expect(all.earnings_micros).toBeGreaterThan(0);

  // A day of 8 to 29 days ago (read whole by 30d, 90d and all) gets one click too many: those ranges of live traffic disagree, nothing else.
  const [row] = await dataSource.query(
    `SELECT bucket FROM reporting.rollup_day WHERE agent_id = $1 AND traffic = 'live' AND bucket < $2 AND bucket > $3 ORDER BY bucket LIMIT 1`,
    [AGENT, new Date(NOW - 8 * 86_400_000).toISOString(), new Date(NOW - 29 * 86_400_000).toISOString()],
  );
  expect(row).toBeDefined();
  await dataSource.query(`UPDATE reporting.rollup_day SET clicks = clicks + 1 WHERE agent_id = $1 AND traffic = 'live' AND bucket = $2`, [AGENT, row.bucket]);
  const tampered = await ops(['reporting', 'verify', '--agent-id', AGENT, '--traffic', 'live']);
  expect(tampered.code).toBe(1);
  expect(tampered.stderr).toMatch(/differ/);
  const bad = JSON.parse(tampered.stdout) as { checked: { traffic: string }[]; mismatches: { traffic: string; time_range: string; figure: string; rollups: number; recomputed: number }[] };
  expect(new Set(bad.checked.map((c) => c.traffic))).toEqual(new Set(['live']));
  expect(bad.mismatches.map((m) => `${m.time_range}:${m.figure}:${m.rollups - m.recomputed}`)).toEqual(['30d:clicks:1', '90d:clicks:1', 'all:clicks:1']);

  const usage = await ops(['reporting', 'verify', '--agent-id', AGENT, '--traffic', 'both']);
  expect(usage.code).toBe(2);
  expect(usage.stdout).toBe('');
});
