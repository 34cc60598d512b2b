import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { counter, type Logger } from '#libs/observability';
import type { RollupRow } from './rollup-deltas.js';

export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, the first Monday of the epoch: partitions run Monday 00:00 UTC to the next. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

/** The start (Monday 00:00 UTC) of the partition week holding an instant. */
export function weekStart(instantMs: number): number {
  return Math.floor((instantMs - FIRST_MONDAY_MS) / WEEK_MS) * WEEK_MS + FIRST_MONDAY_MS;
}

/** The service's notion of now; tests move it. */
export type StorageClock = () => number;

/** Weeks made ahead of the current one, so that live traffic never waits for a partition. */
export const WEEKS_AHEAD = 2;
const MAINTENANCE_INTERVAL_MS = 3_600_000;

/** The tables whose weeks leave the store with the restatement window. */
const RESTATED_TABLES = ['recommendation', 'accounting_entry'] as const;

/**
 * How far back (days before now) the per-recommendation state must reach for a period edge that
 * is not on a quarter-hour (the start of the rolling 90d window, 90 × 24 h before the cutoff) to
 * be answered from it once its minutes are coarsened; a day of margin for the cutoff's lag.
 */
export const STATE_EDGE_DAYS = 91;
export const QUARTER_MS = 15 * 60_000;
/**
 * Days before the newest published cutoff that no period but `all` reaches: the 90d window's start
 * (STATE_EDGE_DAYS, with its day of margin) and another day. Breakdown weeks older than that are
 * folded into one row per pair (foldBreakdowns).
 */
export const BREAKDOWN_EDGE_DAYS = STATE_EDGE_DAYS + 1;
/** Taken by a fold of breakdown weeks: replicas fold one week at a time, and each once. */
const BREAKDOWN_ARCHIVE_LOCK = `hashtext('reporting.breakdown_archive')`;
const BREAKDOWN_FIGURES = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'] as const;
/** Taken shared by a writer of old minute deltas, exclusive by a coarsening: the bound cannot move under a writer. */
const MINUTE_WINDOW_LOCK = `hashtext('reporting.rollup_minute_window')`;
/** A minute delta this much newer than the oldest minute kept never needs the bound (replicas' clocks differ by far less). */
const ROUTING_MARGIN_MS = DAY_MS;
const COUNTERS = [
  'exposures',
  'clicks',
  'engagements',
  'conversions',
  'earnings_micros',
  'earnings_excluded_recommendations',
  'pending_earnings_recommendations',
  'accounting_review_required',
] as const;

const partitionsDropped = counter('weave_reporting_partitions_dropped_total', 'Weekly partitions of the reporting store dropped after the restatement window', ['table']);
const weeksCoarsened = counter('weave_reporting_minute_weeks_coarsened_total', 'Weeks of minute rollups summed into quarter-hour rollups and dropped');
const breakdownWeeksFolded = counter('weave_reporting_breakdown_weeks_folded_total', 'Weeks of breakdown rollups folded into the per-pair archive and dropped');
const maintenanceFailures = counter(
  'weave_reporting_maintenance_failures_total',
  'Steps of the reporting store maintenance that failed (retried at the next hourly run)',
  ['step'],
);

/**
 * The weekly partitions of recommendation, accounting_entry and rollup_minute (by creation time:
 * created_at, recorded_at, bucket), made and dropped by the service itself (plain SQL, no
 * extension): `reporting.ensure_partitions` makes the current week and the next ones every hour,
 * and a week a batch needs before the batch writes it (a backfill of old events); each replica
 * remembers the weeks it knows to exist. A week of per-recommendation state or accounting
 * entries that ends before the restatement horizon (now − REPORTING_RESTATEMENT_DAYS) is dropped
 * whole; events and entries older than the horizon are dead-lettered instead of applied
 * (ProjectionService), so nothing writes a dropped week. The rollups are not touched: every
 * answer stays what it was.
 *
 * Minute rollups older than the minute window (REPORTING_MINUTE_ROLLUPS_DAYS) are coarsened a
 * week at a time (coarsen): the week's minute rows are summed into `rollup_quarter` and its
 * partition dropped in one transaction, and the bound between the two tables
 * (`rollup_minute_window.minute_from`) moves to the week's end. A late delta for a minute before
 * the bound goes to its quarter instead (routeMinuteRows); the writer takes the bound under a
 * shared advisory lock that the coarsening takes exclusively, so no delta lands in a week being
 * summed, and none is counted twice or lost.
 *
 * Breakdown rollups of weeks that no period but `all` reaches any more, and that no event can
 * change, are folded into one row per (platform, traffic, ad, product) a week at a time
 * (foldBreakdowns), so that they grow with the catalog, not with time.
 */
@Injectable()
export class StoragePartitions implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly known = new Set<number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly clock: StorageClock = Date.now,
    readonly restatementDays = 120,
    readonly minuteRollupDays = 35,
    private readonly logger?: Logger,
  ) {}

  /**
   * Days of minute rollups kept: REPORTING_MINUTE_ROLLUPS_DAYS when the per-recommendation state
   * reaches back far enough to answer the 90d window's start (STATE_EDGE_DAYS), otherwise at least
   * that many days, so that the start is still answered from minute rows.
   */
  get minuteWindowDays(): number {
    return this.restatementDays >= STATE_EDGE_DAYS ? this.minuteRollupDays : Math.max(this.minuteRollupDays, STATE_EDGE_DAYS);
  }

  async onApplicationBootstrap(): Promise<void> {
    // Not fatal: a batch makes the weeks it needs anyway, and the next run drops what expired.
    const run = () => this.maintain().catch((error: unknown) => this.logger?.error({ err: error }, 'reporting store maintenance failed; retried at the next hourly run'));
    await run();
    this.timer = setInterval(() => void run(), MAINTENANCE_INTERVAL_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Events and entries created before this instant no longer change any total. */
  restatementHorizon(): number {
    return this.clock() - this.restatementDays * DAY_MS;
  }

  /**
   * One maintenance run: the weeks ahead made, the expired ones dropped, the old minute weeks
   * coarsened, the old breakdown weeks folded. Each step runs whether the one before failed or
   * not (a drop waiting out its lock timeout does not hold back the fold); a failed step is
   * counted in weave_reporting_maintenance_failures_total{step}, and the run then rejects with
   * every failure once all steps have run.
   */
  async maintain(): Promise<{ made: number; dropped: string[]; coarsened: string[]; folded: string[] }> {
    const failures: { name: string; error: unknown }[] = [];
    let steps = 0;
    const step = async <T>(name: string, run: () => Promise<T>, none: T): Promise<T> => {
      steps += 1;
      try {
        return await run();
      } catch (error) {
        maintenanceFailures.inc({ step: name });
        failures.push({ name, error });
        return none;
      }
    };
    const made = await step('make', () => this.ensureAhead(), 0);
    const dropped = await step('drop', () => this.dropExpired(), []);
    const coarsened = await step('coarsen', () => this.coarsen(), []);
    const folded = await step('fold', () => this.foldBreakdowns(), []);
    if (failures.length > 0) {
      const failed = failures.map(({ name, error }) => `${name}: ${error instanceof Error ? error.message : String(error)}`).join('; ');
      throw new AggregateError(
        failures.map(({ error }) => error),
        `reporting store maintenance: ${failures.length} of ${steps} steps failed (${failed})`,
      );
    }
    return { made, dropped, coarsened, folded };
  }

  /** Makes the current week and the next WEEKS_AHEAD; resolves to the partitions made. */
  ensureAhead(): Promise<number> {
    const now = this.clock();
    return this.ensureWeeks(Array.from({ length: WEEKS_AHEAD + 1 }, (_, i) => weekStart(now) + i * WEEK_MS), true);
  }

  /**
   * Makes sure the weeks of these instants exist; a query only for a week not seen before. A week
   * wholly before the horizon is not made again (what it would hold is dead-lettered).
   */
  async ensureFor(instantsMs: readonly number[]): Promise<void> {
    const horizon = this.restatementHorizon();
    await this.ensureWeeks(
      instantsMs.filter(Number.isFinite).map(weekStart).filter((week) => week + WEEK_MS > horizon),
      false,
    );
  }

  /** Drops the weeks of per-recommendation state and entries that end at or before the horizon. */
  async dropExpired(): Promise<string[]> {
    const horizon = this.restatementHorizon();
    const partitions: { parent: string; name: string }[] = await this.dataSource.query(
      `SELECT p.relname AS parent, c.relname AS name
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relnamespace = 'reporting'::regnamespace AND p.relname = ANY($1::text[])
        ORDER BY c.relname`,
      [RESTATED_TABLES],
    );
    const dropped: string[] = [];
    for (const { parent, name } of partitions) {
      const week = partitionWeek(parent, name);
      if (week === null || week + WEEK_MS > horizon) continue;
      // One partition per statement: each takes the parent's lock only briefly.
      await this.dataSource.query(`DROP TABLE IF EXISTS reporting."${name}"`);
      this.known.delete(week);
      partitionsDropped.inc({ table: parent });
      dropped.push(name);
    }
    return dropped;
  }

  /**
   * Coarsens every week of minute rollups that ends at or before now − the minute window, oldest
   * first, one transaction per week: under the exclusive lock of the bound, the bound moves to the
   * week's end, the week's minutes are added to their quarter-hours and the partition is dropped.
   * A crash anywhere in between leaves the week as it was; a replica that finds the week gone
   * (coarsened by another) skips it. Resolves to the partitions dropped.
   */
  async coarsen(): Promise<string[]> {
    const limit = this.clock() - this.minuteWindowDays * DAY_MS;
    const due = (await this.partitionsOf(['rollup_minute'])).filter(({ week }) => week + WEEK_MS <= limit);
    if (due.length === 0) return [];
    // Every week a late delta may still reach below the new bound has its quarter partition first (a week without minutes
    // included), made outside the coarsening so that it never holds rollup_quarter's lock while waiting for rollup_minute's.
    const newBound = Math.max(...due.map(({ week }) => week + WEEK_MS));
    const weeks = new Set(due.map(({ week }) => week));
    for (let week = weekStart(this.restatementHorizon()) - WEEK_MS; week < newBound; week += WEEK_MS) weeks.add(week);
    await this.ensureQuarterWeeks([...weeks]);
    return this.weekByWeek(due, MINUTE_WINDOW_LOCK, weeksCoarsened, async (manager, name, week) => {
      await manager.query(`UPDATE reporting.rollup_minute_window SET minute_from = greatest(minute_from, $1::timestamptz)`, [
        new Date(week + WEEK_MS).toISOString(),
      ]);
      await manager.query(
        `INSERT INTO reporting.rollup_quarter AS t (agent_id, traffic, bucket, ${COUNTERS.join(', ')})
         SELECT agent_id, traffic, date_bin('15 minutes', bucket, timestamptz '2000-01-01 00:00:00+00'),
                ${COUNTERS.map((c) => `sum(${c})`).join(', ')}
           FROM reporting."${name}"
          GROUP BY 1, 2, 3
         HAVING ${COUNTERS.map((c) => `sum(${c}) <> 0`).join(' OR ')}
         ON CONFLICT (agent_id, traffic, bucket) DO UPDATE SET ${COUNTERS.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
      );
      // The drop waits for the readers of rollup_minute (a publication's snapshot); ingestion of new minutes queues meanwhile.
      await manager.query(`SET LOCAL lock_timeout = '60s'`);
    });
  }

  /**
   * Where breakdown weeks may be folded: a week that ends at or before it is older than every
   * period edge of a publication (those of the newest published cutoff, BREAKDOWN_EDGE_DAYS,
   * and of any later one, since the cutoff never moves back) but `all`'s, which has none there,
   * and than the restatement horizon with a day's margin for the replicas' clocks, so no event
   * writes it any more. -Infinity before the first publication.
   */
  async breakdownFoldLimit(): Promise<number> {
    const [state] = (await this.dataSource.query(
      `SELECT extract(epoch FROM processed_through) * 1000 AS through_ms FROM reporting.publication_state WHERE id = 1`,
    )) as { through_ms: string | null }[];
    if (!state || state.through_ms === null) return Number.NEGATIVE_INFINITY;
    return Math.min(this.restatementHorizon() - ROUTING_MARGIN_MS, Number(state.through_ms) - BREAKDOWN_EDGE_DAYS * DAY_MS);
  }

  /**
   * Folds every week of breakdown_pair that ends at or before breakdownFoldLimit, oldest first,
   * one transaction per week: its rows are added to `breakdown_archive` (one row per platform,
   * traffic, ad and product), the bound `breakdown_archive_window.archived_before` moves to the
   * week's end and the partition is dropped. A crash anywhere in between leaves the week as it
   * was; a replica that finds the week gone (folded by another) skips it. Resolves to the
   * partitions dropped.
   */
  async foldBreakdowns(): Promise<string[]> {
    const limit = await this.breakdownFoldLimit();
    const due = (await this.partitionsOf(['breakdown_pair'])).filter(({ week }) => week + WEEK_MS <= limit);
    return this.weekByWeek(due, BREAKDOWN_ARCHIVE_LOCK, breakdownWeeksFolded, async (manager, name, week) => {
      // The week is taken whole first (after the readers of breakdown_pair: a publication's snapshot),
      // so that no writer can commit a row between the sums below and the drop.
      await manager.query(`SET LOCAL lock_timeout = '60s'`);
      await manager.query(`LOCK TABLE reporting."${name}" IN ACCESS EXCLUSIVE MODE`);
      await manager.query(`UPDATE reporting.breakdown_archive_window SET archived_before = greatest(archived_before, $1::timestamptz)`, [
        new Date(week + WEEK_MS).toISOString(),
      ]);
      await manager.query(
        `INSERT INTO reporting.breakdown_archive AS t (agent_id, traffic, ad_id, product_id, ${BREAKDOWN_FIGURES.join(', ')})
         SELECT agent_id, traffic, ad_id, product_id, ${BREAKDOWN_FIGURES.map((c) => `sum(${c})`).join(', ')}
           FROM reporting."${name}"
          GROUP BY 1, 2, 3, 4
         HAVING ${BREAKDOWN_FIGURES.map((c) => `sum(${c}) <> 0`).join(' OR ')}
          ORDER BY 1, 2, 3, 4
         ON CONFLICT (agent_id, traffic, ad_id, product_id) DO UPDATE SET ${BREAKDOWN_FIGURES.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
      );
    });
  }

  /**
   * The weeks `due`, oldest first, each in its own transaction: under the advisory lock `lock`,
   * a week another replica already dropped is skipped; otherwise `work` moves what the week holds
   * and the partition is dropped in the same transaction, and `counted` counts it. Resolves to the
   * partitions dropped. A failure leaves its week as it was and stops at it (the next run
   * resumes there).
   */
  private async weekByWeek(
    due: readonly { name: string; week: number }[],
    lock: string,
    counted: { inc(): void },
    work: (manager: EntityManager, name: string, week: number) => Promise<void>,
  ): Promise<string[]> {
    const dropped: string[] = [];
    for (const { name, week } of due) {
      const done = await this.dataSource.transaction('READ COMMITTED', async (manager) => {
        await manager.query(`SELECT pg_advisory_xact_lock(${lock})`);
        if (!(await partitionPresent(manager, name))) return false;
        await work(manager, name, week);
        await manager.query(`DROP TABLE reporting."${name}"`);
        return true;
      });
      if (!done) continue;
      counted.inc();
      dropped.push(name);
    }
    return dropped;
  }

  /**
   * Splits a batch's sorted minute deltas between rollup_minute and rollup_quarter, inside the
   * writing transaction and before it writes either. Deltas well inside the minute window (the
   * live traffic) go to minutes without a query: no coarsening can reach them. Otherwise the
   * bound is read under the shared lock, held to commit; a delta before it goes to its quarter
   * (merged per quarter, in the same sorted order).
   */
  async routeMinuteRows(manager: { query(text: string, values?: unknown[]): Promise<unknown> }, rows: RollupRow[]): Promise<{ minute: RollupRow[]; quarter: RollupRow[] }> {
    const safeFrom = this.clock() - this.minuteWindowDays * DAY_MS + ROUTING_MARGIN_MS;
    if (rows.every((row) => row.bucketMs >= safeFrom)) return { minute: rows, quarter: [] };
    await manager.query(`SELECT pg_advisory_xact_lock_shared(${MINUTE_WINDOW_LOCK})`);
    const [{ from_ms }] = (await manager.query(`SELECT extract(epoch FROM minute_from) * 1000 AS from_ms FROM reporting.rollup_minute_window`)) as { from_ms: string }[];
    const bound = Number(from_ms);
    const minute: RollupRow[] = [];
    const quarter: RollupRow[] = [];
    for (const row of rows) {
      if (row.bucketMs >= bound) {
        minute.push(row);
        continue;
      }
      const bucketMs = Math.floor(row.bucketMs / QUARTER_MS) * QUARTER_MS;
      const last = quarter[quarter.length - 1];
      if (last && last.agentId === row.agentId && last.traffic === row.traffic && last.bucketMs === bucketMs) {
        for (const name of COUNTERS) last.counters[name] += row.counters[name];
      } else {
        quarter.push({ agentId: row.agentId, traffic: row.traffic, bucketMs, counters: { ...row.counters } });
      }
    }
    return { minute, quarter };
  }

  private readonly knownQuarterWeeks = new Set<number>();

  /** Makes the quarter partitions of these weeks (under ensure_partitions' lock, so replicas can do it together). */
  private async ensureQuarterWeeks(weeks: number[]): Promise<void> {
    const missing = weeks.filter((week) => !this.knownQuarterWeeks.has(week)).sort((a, b) => a - b);
    if (missing.length === 0) return;
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('reporting.ensure_partitions'))`);
      for (const week of missing) {
        const name = `rollup_quarter_w${new Date(week).toISOString().slice(0, 10).replaceAll('-', '')}`;
        const [{ present }] = await manager.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [`reporting.${name}`]);
        if (!present) {
          await manager.query(
            `CREATE TABLE reporting."${name}" PARTITION OF reporting.rollup_quarter
               FOR VALUES FROM ('${new Date(week).toISOString()}') TO ('${new Date(week + WEEK_MS).toISOString()}')`,
          );
        }
      }
    });
    for (const week of missing) this.knownQuarterWeeks.add(week);
  }

  private async partitionsOf(parents: readonly string[]): Promise<{ parent: string; name: string; week: number }[]> {
    const rows: { parent: string; name: string }[] = await this.dataSource.query(
      `SELECT p.relname AS parent, c.relname AS name
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relnamespace = 'reporting'::regnamespace AND p.relname = ANY($1::text[])
        ORDER BY c.relname`,
      [parents],
    );
    return rows.flatMap(({ parent, name }) => {
      const week = partitionWeek(parent, name);
      return week === null ? [] : [{ parent, name, week }];
    });
  }

  private async ensureWeeks(weeks: number[], always: boolean): Promise<number> {
    const missing = [...new Set(weeks)].filter((week) => always || !this.known.has(week));
    if (missing.length === 0) return 0;
    const [{ made }] = await this.dataSource.query(`SELECT reporting.ensure_partitions($1::timestamptz[]) + reporting.ensure_breakdown_partitions($1::timestamptz[]) AS made`, [
      missing.map((week) => new Date(week).toISOString()),
    ]);
    for (const week of missing) this.known.add(week);
    return made;
  }
}

/**
 * Whether a partition still exists, for a replica that took a week's lock after another replica
 * coarsened or folded it. Read from pg_class in the statement's snapshot: to_regclass may answer
 * from a cache that has not yet seen the other replica's drop.
 */
async function partitionPresent(manager: EntityManager, name: string): Promise<boolean> {
  const [{ present }] = (await manager.query(`SELECT EXISTS (SELECT 1 FROM pg_class WHERE relnamespace = 'reporting'::regnamespace AND relname = $1) AS present`, [
    name,
  ])) as { present: boolean }[];
  return present;
}

/** The week of a partition named `<parent>_wYYYYMMDD` (reporting.ensure_partitions), or null. */
function partitionWeek(parent: string, name: string): number | null {
  const match = /^_w(\d{4})(\d{2})(\d{2})$/.exec(name.slice(parent.length));
  return match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : null;
}
