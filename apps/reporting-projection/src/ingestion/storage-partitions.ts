import { Inject, Injectable, Optional, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';

export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, the first Monday of the epoch: partitions run Monday 00:00 UTC to the next. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

/** The start (Monday 00:00 UTC) of the partition week holding an instant. */
export function weekStart(instantMs: number): number {
  return Math.floor((instantMs - FIRST_MONDAY_MS) / WEEK_MS) * WEEK_MS + FIRST_MONDAY_MS;
}

/** The service's notion of now; injected so that tests can move it. */
export const STORAGE_CLOCK = Symbol('STORAGE_CLOCK');
export type StorageClock = () => number;

/** Weeks made ahead of the current one, so that live traffic never waits for a partition. */
export const WEEKS_AHEAD = 2;
const MAINTENANCE_INTERVAL_MS = 3_600_000;

/**
 * The weekly partitions of recommendation, accounting_entry and rollup_minute (by creation time:
 * created_at, recorded_at, bucket), made by the service itself with `reporting.ensure_partitions`
 * (plain SQL, no extension to install): ahead of time every hour for the current week and the
 * next ones, and on demand before a batch writes a week this process has not seen yet (a
 * backfill of old events). Each replica remembers the weeks it knows to exist.
 */
@Injectable()
export class StoragePartitions implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly known = new Set<number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(STORAGE_CLOCK) private readonly clock: StorageClock = Date.now,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Not fatal: a batch makes the weeks it needs anyway.
    await this.ensureAhead().catch(() => undefined);
    this.timer = setInterval(() => void this.ensureAhead().catch(() => undefined), MAINTENANCE_INTERVAL_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Makes the current week and the next WEEKS_AHEAD; resolves to the partitions made. */
  ensureAhead(): Promise<number> {
    const now = this.clock();
    return this.ensureWeeks(Array.from({ length: WEEKS_AHEAD + 1 }, (_, i) => weekStart(now) + i * WEEK_MS), true);
  }

  /** Makes sure the weeks of these instants exist; a query only for a week not seen before. */
  async ensureFor(instantsMs: readonly number[]): Promise<void> {
    await this.ensureWeeks(instantsMs.filter(Number.isFinite).map(weekStart), false);
  }

  private async ensureWeeks(weeks: number[], always: boolean): Promise<number> {
    const missing = [...new Set(weeks)].filter((week) => always || !this.known.has(week));
    if (missing.length === 0) return 0;
    const [{ made }] = await this.dataSource.query(`SELECT reporting.ensure_partitions($1::timestamptz[]) AS made`, [
      missing.map((week) => new Date(week).toISOString()),
    ]);
    for (const week of missing) this.known.add(week);
    return made;
  }
}
