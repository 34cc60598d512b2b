import type { DataSource } from 'typeorm';
import { initializeDatabase } from '#libs/database';
import { BREAKDOWN_BYS, TIME_RANGES } from '#libs/contracts';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { PAST_RESTATEMENT_WINDOW, ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { BREAKDOWN_EDGE_DAYS, DAY_MS, StoragePartitions, WEEK_MS, weekStart } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { BreakdownBuilder } from '../../apps/reporting-projection/src/publication/breakdown-builder.service.js';
import { RollupQueryRepository } from '../../apps/reporting-projection/src/publication/rollup-query.repository.js';
import { SnapshotBuilder } from '../../apps/reporting-projection/src/publication/snapshot-builder.service.js';
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { newTestDatabase, type TestDatabase } from '../support/index.js';
import { referenceReport, type ModelEvent } from '../support/reference-model.js';
import { referenceBreakdown, type BreakdownModelEvent } from '../support/reference-breakdown.js';

/**
 * The bounded store of DESIGN §10 with a moving clock: 200 simulated days of traffic (with late
 * events, some past the window) ingested in 4-day steps, REPORTING_RESTATEMENT_DAYS at its
 * minimum of 35. After every step the store holds per-recommendation state and entries only for
 * the weeks that end after the horizon, an event older than the window is dead-lettered with its
 * reason, and every report and breakdown of every range equals the reference model over the
 * events applied, before and after each drop. Breakdown weeks older than every period edge but
 * `all`'s are folded into one row per (ad, product) and dropped, so the breakdown rollups keep
 * only the weeks a period can still start in.
 */

const RESTATEMENT_DAYS = 35;
const START = Date.parse('2031-01-01T00:00:00Z');
const STEP_DAYS = 4;
const DAYS = 200;
const AGENTS = { agent_ret_a: 'UTC', agent_ret_b: 'Asia/Kathmandu' } as const;
const TRAFFICS = ['live', 'test'] as const;
const KINDS = ['generated', 'shown', 'clicked', 'engaged', 'converted'] as const;
const ADS = ['ad_1', 'ad_2', 'ad_3', 'ad_10'];
const PRODUCTS = ['prod_x', 'prod_y', 'prod_z'];
const encoder = new TextEncoder();

/** A small deterministic generator (the test must fail the same way twice). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Recommendation {
  id: string;
  agent: keyof typeof AGENTS;
  traffic: 'live' | 'test';
  createdAt: number;
}

const scratch = { db: undefined as TestDatabase | undefined, dataSource: undefined as DataSource | undefined };

beforeAll(async () => {
  scratch.db = newTestDatabase();
  scratch.dataSource = createReportingDataSource(scratch.db.url, 4);
  await initializeDatabase(scratch.dataSource);
});

afterAll(async () => {
  await scratch.dataSource?.destroy();
  await scratch.db?.drop();
});

it('keeps only the restatement window over 200 days, dead-letters what is older, and every report stays the reference', async () => {
  const dataSource = scratch.dataSource!;
  for (const [agent, zone] of Object.entries(AGENTS)) await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, $2, now())`, [agent, zone]);
  let now = START;
  const partitions = new StoragePartitions(dataSource, () => now, RESTATEMENT_DAYS);
  const projection = new ProjectionService(new ProjectionRepository(dataSource, partitions), 2);
  const builder = new SnapshotBuilder(dataSource, new RollupQueryRepository(dataSource));
  const breakdowns = new BreakdownBuilder(dataSource);
  const next = random(21);
  const recommendations: Recommendation[] = [];
  const applied: ModelEvent[] = [];
  let sequence = 0;
  let deadLettered = 0;
  let dropped = 0;
  let folded = 0;

  const scopes = Object.keys(AGENTS).flatMap((agentId) => TRAFFICS.flatMap((traffic) => TIME_RANGES.map((timeRange) => ({ agentId, traffic, timeRange }))));
  const expectReportsEqualModel = async (when: string) => {
    const snapshots = await builder.build(scopes, new Date(now), new Date(now));
    for (const snapshot of snapshots) {
      const period = reportPeriod(snapshot.timeRange, new Date(now), AGENTS[snapshot.agentId as keyof typeof AGENTS]);
      const { reconciled_through: _, ...expected } = referenceReport(applied, {
        agent_id: snapshot.agentId,
        traffic: snapshot.traffic as 'live' | 'test',
        start: period.start,
        end: period.end,
      });
      const scope = `${when} ${new Date(now).toISOString()} ${snapshot.agentId}/${snapshot.traffic}/${snapshot.timeRange}`;
      const actual = Object.fromEntries(Object.keys(expected).map((name) => [name, snapshot[name as keyof typeof expected]]));
      expect({ scope, ...actual }).toEqual({ scope, ...expected });
    }
    const breakdownScopes = scopes.flatMap((scope) => BREAKDOWN_BYS.map((by) => ({ ...scope, by })));
    for (const one of await breakdowns.build(breakdownScopes, new Date(now), new Date(now))) {
      const period = reportPeriod(one.timeRange, new Date(now), AGENTS[one.agentId as keyof typeof AGENTS]);
      const expected = referenceBreakdown(applied as BreakdownModelEvent[], { agent_id: one.agentId, traffic: one.traffic as 'live' | 'test', start: period.start, end: period.end }, one.by, 'earnings_micros');
      const scope = `${when} ${new Date(now).toISOString()} ${one.agentId}/${one.traffic}/${one.timeRange}/${one.by}`;
      expect({ scope, rows: one.tops.earnings_micros }).toEqual({ scope, rows: expected.slice(0, 100) });
    }
  };

  for (let day = 0; day < DAYS; day += STEP_DAYS) {
    const stepStart = START + day * DAY_MS;
    now = stepStart + STEP_DAYS * DAY_MS;
    const events: ModelEvent[] = [];
    const lifecycle = (rec: Recommendation, kind: (typeof KINDS)[number], billable: boolean): ModelEvent => ({
      type: 'recommendation',
      kind,
      event_id: `evt_${rec.id}_${kind}_${sequence + events.length}`,
      recommendation_id: rec.id,
      agent_id: rec.agent,
      traffic: rec.traffic,
      recommendation_created_at: new Date(rec.createdAt).toISOString(),
      occurred_at: new Date(Math.min(now - 60_000, rec.createdAt + 60_000)).toISOString(),
      billable,
      // Most `generated` events name their ad and product; the rest leave the recommendation unattributed until another one does.
      ...(kind === 'generated' && next() < 0.85 ? { ad_id: ADS[Math.floor(next() * ADS.length)], product_id: PRODUCTS[Math.floor(next() * PRODUCTS.length)] } : {}),
    }) as ModelEvent;
    // New recommendations of the step, each with its first events and, for some, an entry
    // recorded when it was created (USD, another currency or none).
    for (let i = 0; i < 24; i++) {
      const rec: Recommendation = {
        id: `rec_${day}_${i}`,
        agent: next() < 0.5 ? 'agent_ret_a' : 'agent_ret_b',
        traffic: next() < 0.7 ? 'live' : 'test',
        createdAt: stepStart + Math.floor(next() * (STEP_DAYS * DAY_MS - 120_000)),
      };
      recommendations.push(rec);
      const level = Math.floor(next() * KINDS.length);
      const billable = next() < 0.4;
      events.push(lifecycle(rec, KINDS[level], billable));
      if (next() < 0.3) {
        events.push({
          type: 'accounting',
          entry_id: `acc_${rec.id}`,
          agent_id: rec.agent,
          traffic: rec.traffic,
          recommendation_id: rec.id,
          amount_micros: Math.floor(next() * 2_000_000) - 200_000,
          currency: next() < 0.8 ? 'USD' : next() < 0.5 ? 'EUR' : null,
          recorded_at: new Date(rec.createdAt).toISOString(),
        });
      }
    }
    // Late events for recommendations of the last 50 days: within the window they still count, older ones are dead-lettered.
    for (let i = 0; i < 12; i++) {
      const candidates = recommendations.filter((r) => r.createdAt >= now - 50 * DAY_MS && r.createdAt < stepStart);
      if (candidates.length === 0) break;
      const rec = candidates[Math.floor(next() * candidates.length)];
      events.push(lifecycle(rec, KINDS[Math.floor(next() * KINDS.length)], next() < 0.3));
    }

    const horizon = now - RESTATEMENT_DAYS * DAY_MS;
    const messages: InboundMessage[] = events.map((event) => {
      const { type, kind, ...payload } = event as ModelEvent & { kind?: string };
      const subject = type === 'accounting' ? 'events.accounting.entry' : `events.recommendation.${kind}`;
      return { subject, sequence: ++sequence, deliveries: 1, data: encoder.encode(JSON.stringify(payload)) };
    });
    // In two batches, as a consumer would fetch them.
    const half = Math.floor(messages.length / 2);
    const outcomes: MessageOutcome[] = [...(await projection.applyBatch(messages.slice(0, half))), ...(await projection.applyBatch(messages.slice(half)))];
    events.forEach((event, i) => {
      const createdAt = Date.parse(event.type === 'accounting' ? event.recorded_at : (event as { recommendation_created_at: string }).recommendation_created_at);
      if (createdAt < horizon) {
        expect(outcomes[i]).toEqual({ kind: 'dead-letter', reason: PAST_RESTATEMENT_WINDOW, cause: 'past_restatement_window' });
        deadLettered++;
      } else {
        expect(outcomes[i]).toEqual({ kind: 'applied' });
        applied.push(event);
      }
    });

    // A publication at `now` (the fold follows the newest published cutoff).
    await dataSource.query(`UPDATE reporting.publication_state SET processed_through = $1 WHERE id = 1`, [new Date(now).toISOString()]);
    await expectReportsEqualModel('before the drop');
    const maintained = await partitions.maintain();
    dropped += maintained.dropped.length;
    folded += maintained.folded.length;
    await expectReportsEqualModel('after the drop');

    // Breakdown weeks are kept from the fold's bound on; everything before it is in the archive.
    const foldLimit = now - BREAKDOWN_EDGE_DAYS * DAY_MS;
    const breakdownWeeks: { name: string }[] = await dataSource.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'reporting.breakdown_pair'::regclass`,
    );
    for (const { name } of breakdownWeeks) {
      const [, y, m, d] = /_w(\d{4})(\d{2})(\d{2})$/.exec(name)!;
      expect({ name, after: Date.UTC(Number(y), Number(m) - 1, Number(d)) + WEEK_MS > foldLimit }).toEqual({ name, after: true });
    }
    const [{ archived_before }] = await dataSource.query(`SELECT archived_before FROM reporting.breakdown_archive_window`);
    if (folded > 0) expect((archived_before as Date).getTime()).toBeLessThanOrEqual(foldLimit);

    // Only the weeks that end after the horizon are left, and they hold every recommendation created since their start.
    const weeks: { parent: string; name: string }[] = await dataSource.query(
      `SELECT p.relname AS parent, c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname IN ('recommendation', 'accounting_entry')`,
    );
    const kept = weeks.map(({ parent, name }) => {
      const [, y, m, d] = /_w(\d{4})(\d{2})(\d{2})$/.exec(name.slice(parent.length))!;
      return Date.UTC(Number(y), Number(m) - 1, Number(d));
    });
    const oldestKept = Math.min(...kept);
    expect(oldestKept + WEEK_MS).toBeGreaterThan(horizon);
    expect(Math.max(...kept)).toBeLessThanOrEqual(weekStart(now) + 2 * WEEK_MS);
    const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM reporting.recommendation`);
    const keptRecommendations = new Set(
      applied.flatMap((e) => (e.type === 'recommendation' && Date.parse(e.recommendation_created_at) >= oldestKept ? [e.recommendation_id] : [])),
    );
    expect(count).toBe(keptRecommendations.size);
  }

  // The window at its minimum of 35 days holds 5 to 7 weeks; 200 days dropped the rest.
  const [{ weeks }] = await dataSource.query(
    `SELECT count(*)::int AS weeks FROM pg_inherits WHERE inhparent = 'reporting.recommendation'::regclass`,
  );
  expect(weeks).toBeLessThanOrEqual(Math.ceil(RESTATEMENT_DAYS / 7) + 1 + 2 + 1);
  expect(dropped).toBeGreaterThanOrEqual(2 * 20);
  expect(deadLettered).toBeGreaterThan(0);
  // 200 days against a bound 92 days back: at least 14 weeks folded, and the archive holds their pairs.
  expect(folded).toBeGreaterThanOrEqual(14);
  const [{ pairs }] = await dataSource.query(`SELECT count(*)::int AS pairs FROM reporting.breakdown_archive WHERE ad_id <> ''`);
  expect(pairs).toBeGreaterThan(0);
}, 240_000);
