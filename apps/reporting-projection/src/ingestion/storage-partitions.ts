import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { counter } from '#libs/observability';

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

const partitionsDropped = counter('weave_reporting_partitions_dropped_total', 'Weekly partitions of the reporting store dropped after the restatement window', ['table']);

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
 */
@Injectable()
export class StoragePartitions implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly known = new Set<number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly clock: StorageClock = Date.now,
    readonly restatementDays = 120,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Not fatal: a batch makes the weeks it needs anyway, and the next run drops what expired.
    await this.maintain().catch(() => undefined);
    this.timer = setInterval(() => void this.maintain().catch(() => undefined), MAINTENANCE_INTERVAL_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Events and entries created before this instant no longer change any total. */
  restatementHorizon(): number {
    return this.clock() - this.restatementDays * DAY_MS;
  }

  /** One maintenance run: the weeks ahead made, the expired ones dropped. */
  async maintain(): Promise<{ made: number; dropped: string[] }> {
    const made = await this.ensureAhead();
    return { made, dropped: await this.dropExpired() };
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

/** The week of a partition named `<parent>_wYYYYMMDD` (reporting.ensure_partitions), or null. */
function partitionWeek(parent: string, name: string): number | null {
  const match = /^_w(\d{4})(\d{2})(\d{2})$/.exec(name.slice(parent.length));
  return match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : null;
}
