import type { TimeRange } from '#libs/contracts';
import { isIanaTimezone, startOfLocalDay } from '#libs/timezones';

/** The actual period of a report: half-open [start, end); start is null for `all`. */
export interface Period {
  start: Date | null;
  end: Date;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** Rolling windows of SPEC "Period rules": 24 hours × n, fixed UTC durations. */
const ROLLING_DAYS: Partial<Record<TimeRange, number>> = { '1d': 1, '7d': 7, '30d': 30, '90d': 90 };

export function isMinuteAligned(instant: Date): boolean {
  const ms = instant.getTime();
  return Number.isFinite(ms) && ms % MINUTE_MS === 0;
}

export function assertMinuteAligned(instant: Date, what: string): void {
  if (!isMinuteAligned(instant)) {
    throw new RangeError(`${what} must be a valid, minute-aligned instant, got ${String(instant)}`);
  }
}

/**
 * The one rule for IANA names and the one for the start of a local day live in #libs/timezones
 * (the gateway, timezone-settings and the dashboard use them too).
 */
export { isIanaTimezone, startOfLocalDay };

/**
 * The period of a report (SPEC "GET /agent/reporting", Period rules), ending at the processed
 * cutoff: `today` from the start of the local date in the reporting timezone; `1d`…`90d`
 * rolling windows of 24 h × n in UTC (daylight saving never changes their length); `all`
 * covers all history.
 */
export function reportPeriod(range: TimeRange, processedThrough: Date, timezone: string): Period {
  assertMinuteAligned(processedThrough, 'processedThrough');
  const end = new Date(processedThrough.getTime());
  if (range === 'all') return { start: null, end };
  if (range === 'today') return { start: startOfLocalDay(end, timezone), end };
  const days = ROLLING_DAYS[range];
  if (days === undefined) throw new RangeError(`unknown time range: ${String(range)}`);
  return { start: new Date(end.getTime() - days * DAY_MS), end };
}
