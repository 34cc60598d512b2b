import { DateTime, IANAZone } from 'luxon';
import type { TimeRange } from '#libs/contracts';
import { isIanaTimezone } from '#libs/timezones';

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

/** The one rule for IANA names lives in #libs/timezones (the gateway and timezone-settings use it too). */
export { isIanaTimezone };

function zoneOf(timezone: string): IANAZone {
  if (!isIanaTimezone(timezone)) throw new RangeError(`not an IANA time zone: ${JSON.stringify(timezone)}`);
  return IANAZone.create(timezone);
}

/**
 * The first instant of the local calendar date that contains `instant` in `timezone`.
 *
 * Usually that is local midnight. When midnight occurs twice (a fall-back transition at
 * 01:00, e.g. America/Havana 2013-11-03) it is the earlier one; when midnight is skipped
 * (a spring-forward at 00:00, e.g. America/Havana 2013-03-10, America/Santiago 2022-09-11)
 * it is the transition instant, at 01:00 local. All offsets come from luxon; luxon's own
 * `startOf('day')` keeps the current offset and so misses the earlier of two midnights.
 */
export function startOfLocalDay(instant: Date, timezone: string): Date {
  const zone = zoneOf(timezone);
  const at = instant.getTime();
  if (!Number.isFinite(at)) throw new RangeError('instant must be a valid Date');
  const local = DateTime.fromMillis(at, { zone });
  const localDate = local.toISODate();
  // Local midnight of that date read as if it were UTC: the wall clock we look for.
  const midnightWall = DateTime.fromObject(
    { year: local.year, month: local.month, day: local.day },
    { zone: 'utc' },
  ).toMillis();

  // Every offset in force within two days of that midnight (transitions are never closer
  // than a few hours apart, so sampling every hour sees each one).
  const offsetsMs = new Set<number>();
  for (let hours = -48; hours <= 48; hours++) {
    offsetsMs.add(zone.offset(midnightWall + hours * HOUR_MS) * MINUTE_MS);
  }

  // Local midnight exists for each offset that is actually in force at the instant it names.
  const midnights = [...offsetsMs]
    .map((offsetMs) => midnightWall - offsetMs)
    .filter((candidate) => zone.offset(candidate) * MINUTE_MS === midnightWall - candidate)
    .filter((candidate) => candidate <= at);
  if (midnights.length > 0) return new Date(Math.min(...midnights));

  // Midnight was skipped: the date begins at the transition out of the previous date.
  const isOnOrAfterDate = (t: number) => (DateTime.fromMillis(t, { zone }).toISODate() ?? '') >= (localDate ?? '');
  let low = midnightWall - Math.max(...offsetsMs); // still on the previous date
  let high = Math.min(at, midnightWall - Math.min(...offsetsMs)); // already on the date
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    if (isOnOrAfterDate(middle)) high = middle;
    else low = middle;
  }
  return new Date(high);
}

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
