import pg from 'pg';
import type { DataSource } from 'typeorm';
import { initializeDatabase } from '#libs/database';
import { TIME_RANGES, type TimeRange } from '#libs/contracts';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { verifyReporting } from '../../apps/ops/src/reporting-verify.js';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { DAY_MS, StoragePartitions, WEEK_MS } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { RollupQueryRepository } from '../../apps/reporting-projection/src/publication/rollup-query.repository.js';
import { SeriesBuilder } from '../../apps/reporting-projection/src/publication/series-builder.service.js';
import { SeriesQueryRepository } from '../../apps/reporting-projection/src/publication/series-query.repository.js';
import { SnapshotBuilder } from '../../apps/reporting-projection/src/publication/snapshot-builder.service.js';
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { newTestDatabase, type TestDatabase } from '../support/index.js';
import { referenceReport, type ModelEvent } from '../support/reference-model.js';
import { ReferenceCalendar, referenceSeries } from '../support/reference-series.js';

/**
 * Minute rollups coarsened to quarter-hours (DESIGN §10) with a moving clock: 200 simulated days
 * ingested in 4-day steps with the default windows (REPORTING_RESTATEMENT_DAYS 120,
 * REPORTING_MINUTE_ROLLUPS_DAYS 35), cutoffs at odd minutes (so the 90d window starts inside a
 * quarter-hour, where recommendations are placed on purpose), late events and entries for
 * recommendations of coarsened weeks. Before and after every maintenance run, every report (six
 * ranges, both traffics, UTC and Asia/Kathmandu) and, every sixth step, every series (hour and
 * day) equals the reference model, and the store keeps minute rows only inside the window. A second store shows a
 * coarsening killed between summing and dropping changing nothing, and a store filled before the
 * feature coarsened on its first run.
 */

const START = Date.parse('2031-01-06T00:00:00Z');
const STEP_DAYS = 4;
const DAYS = 200;
const MINUTE = 60_000;
const AGENTS = { agent_q_utc: 'UTC', agent_q_ktm: 'Asia/Kathmandu' } as const;
type Agent = keyof typeof AGENTS;
const TRAFFICS = ['live', 'test'] as const;
const KINDS = ['generated', 'shown', 'clicked', 'engaged', 'converted'] as const;
const SERIES: { timeRange: TimeRange; granularity: 'hour' | 'day' }[] = [
  ...(['today', '1d', '7d'] as const).map((timeRange) => ({ timeRange, granularity: 'hour' as const })),
  ...TIME_RANGES.map((timeRange) => ({ timeRange, granularity: 'day' as const })),
];
const encoder = new TextEncoder();

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Recommendation {
  id: string;
  agent: Agent;
  traffic: 'live' | 'test';
  createdAt: number;
}

/** The cutoff of step k: the step's end plus 1 to 59 minutes, so that it is rarely on a quarter-hour. */
const cutoffOf = (step: number) => START + (step + 1) * STEP_DAYS * DAY_MS + (((step * 37) % 59) + 1) * MINUTE;

function toMessages(events: ModelEvent[], first: number): InboundMessage[] {
  return events.map((event, i) => {
    const { type, kind, ...payload } = event as ModelEvent & { kind?: string };
    const subject = type === 'accounting' ? 'events.accounting.entry' : `events.recommendation.${kind}`;
    return { subject, sequence: first + i, deliveries: 1, data: encoder.encode(JSON.stringify(payload)) };
  });
}

async function withStore(run: (dataSource: DataSource, db: TestDatabase) => Promise<void>): Promise<void> {
  const db = newTestDatabase();
  const dataSource = createReportingDataSource(db.url, 4);
  try {
    await initializeDatabase(dataSource);
    for (const [agent, zone] of Object.entries(AGENTS)) await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, $2, now())`, [agent, zone]);
    await run(dataSource, db);
  } finally {
    await dataSource.destroy();
    await db.drop();
  }
}

/** Every report and series of both platforms and traffics at cutoff `now`. */
async function answers(dataSource: DataSource, now: number, withSeries = true) {
  const scopes = Object.keys(AGENTS).flatMap((agentId) => TRAFFICS.flatMap((traffic) => TIME_RANGES.map((timeRange) => ({ agentId, traffic, timeRange }))));
  const snapshots = await new SnapshotBuilder(dataSource, new RollupQueryRepository(dataSource)).build(scopes, new Date(now), new Date(now));
  const seriesScopes = withSeries ? Object.keys(AGENTS).flatMap((agentId) => TRAFFICS.flatMap((traffic) => SERIES.map((s) => ({ agentId, traffic, ...s })))) : [];
  const series = await new SeriesBuilder(dataSource, new SeriesQueryRepository()).build(seriesScopes, new Date(now), new Date(now));
  return { snapshots, series };
}

const FIGURES = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros', 'earnings_excluded_recommendations', 'pending_earnings_recommendations', 'accounting_review_required'] as const;

it('coarsens minutes older than 35 days into quarter-hours over 200 days, and every report and series stays the reference', async () => {
  await withStore(async (dataSource) => {
    let now = START;
    const partitions = new StoragePartitions(dataSource, () => now, 120, 35);
    const projection = new ProjectionService(new ProjectionRepository(dataSource, partitions), 2);
    const calendars = Object.fromEntries(
      Object.entries(AGENTS).map(([agent, zone]) => [agent, new ReferenceCalendar(zone, new Date(START - 92 * DAY_MS), new Date(START + (DAYS + 6) * DAY_MS))]),
    ) as Record<Agent, ReferenceCalendar>;
    const next = random(35);
    const recommendations: Recommendation[] = [];
    const applied: ModelEvent[] = [];
    let sequence = 1;
    let coarsened = 0;
    let lateIntoCoarsened = 0;
    const steps = DAYS / STEP_DAYS;

    /** Reports every time; series (whose reference is slow: a report per bucket) at every sixth step and the last. */
    const expectAnswersEqualModel = async (when: string, withSeries: boolean) => {
      const { snapshots, series } = await answers(dataSource, now, withSeries);
      const byScope = new Map<string, ModelEvent[]>();
      for (const agent of Object.keys(AGENTS)) {
        for (const traffic of TRAFFICS) byScope.set(`${agent}/${traffic}`, applied.filter((e) => e.type !== 'reconciled' && e.agent_id === agent && e.traffic === traffic));
      }
      for (const snapshot of snapshots) {
        const period = reportPeriod(snapshot.timeRange, new Date(now), AGENTS[snapshot.agentId as Agent]);
        const { reconciled_through: _, ...expected } = referenceReport(byScope.get(`${snapshot.agentId}/${snapshot.traffic}`)!, {
          agent_id: snapshot.agentId,
          traffic: snapshot.traffic as 'live' | 'test',
          start: period.start,
          end: period.end,
        });
        const scope = `${when} ${new Date(now).toISOString()} ${snapshot.agentId}/${snapshot.traffic}/${snapshot.timeRange}`;
        const actual = Object.fromEntries(FIGURES.map((name) => [name, snapshot[name]]));
        expect({ scope, ...actual }).toEqual({ scope, ...expected });
      }
      for (const s of series) {
        const period = reportPeriod(s.timeRange, new Date(now), AGENTS[s.agentId as Agent]);
        const expected = referenceSeries(
          byScope.get(`${s.agentId}/${s.traffic}`)!,
          { agent_id: s.agentId, traffic: s.traffic as 'live' | 'test', start: period.start, end: period.end },
          s.granularity,
          calendars[s.agentId as Agent],
        );
        const scope = `${when} ${new Date(now).toISOString()} ${s.agentId}/${s.traffic}/${s.timeRange}/${s.granularity}`;
        expect({ scope, buckets: s.buckets }).toEqual({ scope, buckets: expected });
      }
    };

    for (let step = 0; step < steps; step++) {
      const stepStart = step === 0 ? START : cutoffOf(step - 1);
      now = cutoffOf(step);
      const [{ bound }] = await dataSource.query(`SELECT extract(epoch FROM minute_from) * 1000 AS bound FROM reporting.rollup_minute_window`);
      const events: ModelEvent[] = [];
      const lifecycle = (rec: Recommendation, kind: (typeof KINDS)[number], billable: boolean): ModelEvent => ({
        type: 'recommendation',
        kind,
        event_id: `evt_${rec.id}_${kind}_${sequence + events.length}`,
        recommendation_id: rec.id,
        agent_id: rec.agent,
        traffic: rec.traffic,
        recommendation_created_at: new Date(rec.createdAt).toISOString(),
        occurred_at: new Date(Math.min(now - MINUTE, rec.createdAt + MINUTE)).toISOString(),
        billable,
      });
      const entry = (rec: Recommendation | null, agent: Agent, traffic: 'live' | 'test', recordedAt: number, id: string): ModelEvent => ({
        type: 'accounting',
        entry_id: id,
        agent_id: agent,
        traffic,
        recommendation_id: rec?.id ?? null,
        amount_micros: Math.floor(next() * 2_000_000) - 200_000,
        currency: next() < 0.85 ? 'USD' : next() < 0.5 ? 'EUR' : null,
        recorded_at: new Date(recordedAt).toISOString(),
      });
      const created = (createdAt: number, suffix: string) => {
        const rec: Recommendation = {
          id: `rec_${step}_${suffix}`,
          agent: next() < 0.5 ? 'agent_q_utc' : 'agent_q_ktm',
          traffic: next() < 0.7 ? 'live' : 'test',
          createdAt,
        };
        recommendations.push(rec);
        events.push(lifecycle(rec, KINDS[Math.floor(next() * KINDS.length)], next() < 0.4));
        if (next() < 0.35) events.push(entry(rec, rec.agent, rec.traffic, createdAt, `acc_${rec.id}`));
        if (next() < 0.1) events.push(entry(null, rec.agent, rec.traffic, createdAt + 30_000, `acc_${rec.id}_review`));
      };
      for (let i = 0; i < 24; i++) created(stepStart + Math.floor(next() * (now - stepStart - 2 * MINUTE)), `${i}`);
      // Around the start of the 90d window of each later cutoff that falls in this step: minutes on both sides of it, in its quarter-hour.
      for (let later = step; later < steps; later++) {
        const edge = cutoffOf(later) - 90 * DAY_MS;
        if (edge < stepStart || edge >= now - 2 * MINUTE) continue;
        for (const offset of [-16, -14, -9, -1, 0, 2, 6, 7, 8, 13, 15]) created(edge + offset * MINUTE + Math.floor(next() * 59_000), `edge${later}_${offset}`);
      }
      // Late events and entries for recommendations of the last 110 days (within the restatement window, most of them in coarsened weeks).
      for (let i = 0; i < 16; i++) {
        const candidates = recommendations.filter((r) => r.createdAt >= now - 110 * DAY_MS && r.createdAt < stepStart);
        if (candidates.length === 0) break;
        const rec = candidates[Math.floor(next() * candidates.length)];
        if (rec.createdAt < bound) lateIntoCoarsened++;
        if (next() < 0.6) events.push(lifecycle(rec, KINDS[1 + Math.floor(next() * (KINDS.length - 1))], next() < 0.3));
        else events.push(entry(rec, rec.agent, rec.traffic, now - 2 * MINUTE, `acc_late_${step}_${i}`));
        if (next() < 0.3) events.push(entry(null, rec.agent, rec.traffic, rec.createdAt + 3 * MINUTE, `acc_late_review_${step}_${i}`));
      }

      const messages = toMessages(events, sequence);
      sequence += messages.length;
      const half = Math.floor(messages.length / 2);
      const outcomes: MessageOutcome[] = [...(await projection.applyBatch(messages.slice(0, half))), ...(await projection.applyBatch(messages.slice(half)))];
      outcomes.forEach((outcome) => expect(outcome).toEqual({ kind: 'applied' }));
      applied.push(...events);
      // The late deltas of coarsened weeks went to their quarters: no minute row before the bound, even before maintenance.
      expect(await dataSource.query(`SELECT count(*)::int AS n FROM reporting.rollup_minute, reporting.rollup_minute_window WHERE bucket < minute_from`)).toEqual([{ n: 0 }]);

      const withSeries = step % 6 === 5 || step === steps - 1;
      await expectAnswersEqualModel('before maintenance', withSeries);
      coarsened += (await partitions.maintain()).coarsened.length;
      await expectAnswersEqualModel('after maintenance', withSeries);

      // Minute rows only from the bound on, which is at most 35 days (+ a week) back; quarter rows only before it.
      const [window] = await dataSource.query(
        `SELECT extract(epoch FROM minute_from) * 1000 AS bound,
                (SELECT extract(epoch FROM min(bucket)) * 1000 FROM reporting.rollup_minute) AS first_minute,
                (SELECT extract(epoch FROM max(bucket)) * 1000 FROM reporting.rollup_quarter) AS last_quarter
           FROM reporting.rollup_minute_window`,
      );
      if (now - START > 35 * DAY_MS + WEEK_MS) {
        expect(Number(window.bound)).toBeGreaterThan(now - 35 * DAY_MS - WEEK_MS);
        expect(Number(window.bound)).toBeLessThanOrEqual(now - 35 * DAY_MS);
      }
      if (window.first_minute !== null) expect(Number(window.first_minute)).toBeGreaterThanOrEqual(Number(window.bound));
      if (window.last_quarter !== null) expect(Number(window.last_quarter)).toBeLessThan(Number(window.bound));
      const [{ weeks }] = await dataSource.query(`SELECT count(*)::int AS weeks FROM pg_inherits WHERE inhparent = 'reporting.rollup_minute'::regclass`);
      expect(weeks).toBeLessThanOrEqual(Math.ceil(35 / 7) + 1 + 3);
    }
    expect(coarsened).toBeGreaterThanOrEqual(20);
    expect(lateIntoCoarsened).toBeGreaterThan(50);
  });
}, 600_000);

it('a coarsening killed between summing and dropping changes nothing; a store filled before the feature is coarsened on its first run', async () => {
  await withStore(async (dataSource, db) => {
    // Filled with the clock 30 days after START: nothing is old enough yet, every row is a minute row.
    let now = START + 30 * DAY_MS;
    const partitions = new StoragePartitions(dataSource, () => now, 120, 35);
    const projection = new ProjectionService(new ProjectionRepository(dataSource, partitions), 1);
    // (The week the migration made for the real now is years before this clock: an empty week, coarsened at once.)
    await partitions.maintain();
    const next = random(7);
    const events: ModelEvent[] = [];
    for (let i = 0; i < 300; i++) {
      const agent: Agent = i % 2 === 0 ? 'agent_q_utc' : 'agent_q_ktm';
      const createdAt = START + Math.floor(next() * 29 * DAY_MS);
      events.push({
        type: 'recommendation',
        kind: KINDS[1 + (i % 4)],
        event_id: `evt_${i}`,
        recommendation_id: `rec_${i}`,
        agent_id: agent,
        traffic: TRAFFICS[i % 3 === 0 ? 1 : 0],
        recommendation_created_at: new Date(createdAt).toISOString(),
        occurred_at: new Date(createdAt).toISOString(),
        billable: i % 5 === 0,
      });
      if (i % 4 === 0) {
        events.push({
          type: 'accounting',
          entry_id: `acc_${i}`,
          agent_id: agent,
          traffic: TRAFFICS[i % 3 === 0 ? 1 : 0],
          recommendation_id: i % 8 === 0 ? `rec_${i}` : null,
          amount_micros: 1000 + i,
          currency: 'USD',
          recorded_at: new Date(createdAt).toISOString(),
        });
      }
    }
    (await projection.applyBatch(toMessages(events, 1))).forEach((outcome) => expect(outcome).toEqual({ kind: 'applied' }));
    expect((await partitions.maintain()).coarsened).toEqual([]);

    // 95 days on (cutoff at 7 past a quarter-hour): the weeks older than 35 days are due, and nothing has been coarsened yet.
    now = START + 95 * DAY_MS + 7 * MINUTE;
    await dataSource.query(`UPDATE reporting.publication_state SET processed_through = $1`, [new Date(now).toISOString()]);
    const before = await answers(dataSource, now);
    const minuteWeeks = async () =>
      (await dataSource.query(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'reporting.rollup_minute'::regclass ORDER BY 1`)).map(
        (r: { relname: string }) => r.relname,
      );
    const weeksBefore = await minuteWeeks();
    const boundBefore = await dataSource.query(`SELECT minute_from FROM reporting.rollup_minute_window`);
    const [{ minutes: minuteSums }] = await dataSource.query(`SELECT sum(exposures)::int AS minutes FROM reporting.rollup_minute`);

    // A reader holds rollup_minute; the coarsening sums the first week, then waits to drop it, and its connection is killed there.
    const reader = new pg.Client({ connectionString: db.url });
    await reader.connect();
    await reader.query(`BEGIN; LOCK TABLE ONLY reporting.rollup_minute IN ACCESS SHARE MODE`);
    const attempt = partitions.coarsen();
    attempt.catch(() => undefined);
    let victim: number | undefined;
    while (victim === undefined) {
      const rows: { pid: number }[] = await reader.query(
        `SELECT pid FROM pg_locks WHERE NOT granted AND mode = 'AccessExclusiveLock' AND relation = 'reporting.rollup_minute'::regclass`,
      ).then((r) => r.rows);
      victim = rows[0]?.pid;
      if (victim === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [{ summed }] = (await reader.query(`SELECT count(*)::int AS summed FROM pg_stat_activity WHERE pid = $1 AND query LIKE 'DROP TABLE%'`, [victim])).rows;
    expect(summed).toBe(1);
    await reader.query(`SELECT pg_terminate_backend($1)`, [victim]);
    await expect(attempt).rejects.toThrow();
    await reader.query('ROLLBACK');
    await reader.end();
    expect(await minuteWeeks()).toEqual(weeksBefore);
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM reporting.rollup_quarter`)).toEqual([{ n: 0 }]);
    expect(await dataSource.query(`SELECT minute_from FROM reporting.rollup_minute_window`)).toEqual(boundBefore);
    expect(await answers(dataSource, now)).toEqual(before);

    // The next run, on two replicas at once, coarsens every due week, each once: the same answers, the same sums,
    // only the last 35 days (+ a week) in minutes.
    const [done, other] = await Promise.all([partitions.maintain(), new StoragePartitions(dataSource, () => now, 120, 35).maintain()]);
    const coarsened = [...done.coarsened, ...other.coarsened];
    expect(new Set(coarsened).size).toBe(coarsened.length);
    expect(coarsened.length).toBeGreaterThanOrEqual(4);
    expect((await minuteWeeks()).filter((name: string) => weeksBefore.includes(name))).toEqual(weeksBefore.filter((name: string) => !coarsened.includes(name)));
    expect(await answers(dataSource, now)).toEqual(before);
    const [{ minutes, quarters }] = await dataSource.query(
      `SELECT (SELECT coalesce(sum(exposures), 0)::int FROM reporting.rollup_minute) AS minutes, (SELECT sum(exposures)::int FROM reporting.rollup_quarter) AS quarters`,
    );
    expect(minutes + quarters).toBe(minuteSums);
    expect(quarters).toBeGreaterThan(0);
    expect((await partitions.maintain()).coarsened).toEqual([]);

    // `ops reporting verify` reads the quarters too: the state still kept agrees with them.
    for (const agent of Object.keys(AGENTS)) {
      const outcome = await verifyReporting(db.url, agent, ['live', 'test']);
      expect(outcome.output.mismatches).toEqual([]);
      expect(outcome.output.checked.find((c) => c.traffic === 'live' && c.time_range === '90d')!.figures.exposures).toBeGreaterThan(0);
    }
  });
}, 300_000);
