import { DateTime } from 'luxon';
import { startOfLocalDay } from '#libs/timezones';

/** "2026-11-26 14:05 +05:45": an instant on the wall clock of `zone`, with its offset. */
export function formatInstant(iso: string, zone: string): string {
  const time = DateTime.fromISO(iso, { zone });
  return time.isValid ? time.toFormat('yyyy-LL-dd HH:mm ZZ') : iso;
}

/** "2026-11-26 08:20 UTC". */
export function formatUtc(iso: string): string {
  const time = DateTime.fromISO(iso, { zone: 'utc' });
  return time.isValid ? `${time.toFormat('yyyy-LL-dd HH:mm')} UTC` : iso;
}

/** A bucket's label on the chart and in its table, on the reporting timezone's wall clock. */
export function bucketLabel(startIso: string, granularity: 'hour' | 'day', zone: string): string {
  const time = DateTime.fromISO(startIso, { zone });
  if (!time.isValid) return startIso;
  return granularity === 'day' ? time.toFormat('yyyy-LL-dd') : time.toFormat('yyyy-LL-dd HH:mm');
}

export interface TodayInZone {
  /** The first instant of today's local date in the zone (the server's rule, #libs/timezones). */
  start: Date;
  /** The first instant of tomorrow's local date. */
  nextStart: Date;
  /** Today's date in the zone, e.g. "Sunday, 8 March 2026". */
  dateLabel: string;
  /** Local wall-clock time at which today started, "00:00" (or e.g. "01:00" when midnight was skipped). */
  localStartLabel: string;
  /** The same instant in UTC, "2026-03-08 05:00 UTC". */
  utcStartLabel: string;
  /** The zone's UTC offset when today started, "-05:00". */
  offsetLabel: string;
  /** Length of today in hours (23 or 25 on a daylight-saving day, 24 otherwise). */
  hours: number;
}

/** When "today" starts (and ends) in `zone` at `now`: what the reporting `today` range covers. */
export function todayInZone(now: Date, zone: string): TodayInZone {
  const start = startOfLocalDay(now, zone);
  // 26 hours after the start is always within the next local date (days last 23 to 25 hours).
  const nextStart = startOfLocalDay(new Date(start.getTime() + 26 * 3600_000), zone);
  const local = DateTime.fromJSDate(start, { zone });
  return {
    start,
    nextStart,
    dateLabel: local.setLocale('en-GB').toFormat('cccc, d LLLL yyyy'),
    localStartLabel: local.toFormat('HH:mm'),
    utcStartLabel: formatUtc(start.toISOString()),
    offsetLabel: local.toFormat('ZZ'),
    hours: (nextStart.getTime() - start.getTime()) / 3600_000,
  };
}
