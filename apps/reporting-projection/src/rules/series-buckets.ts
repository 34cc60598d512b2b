import { IANAZone } from 'luxon';
import type { SeriesGranularity } from '#libs/contracts';
import { HOUR_MS, MINUTE_MS, isIanaTimezone, startOfLocalDay } from './periods.js';

const DAY_MS = 24 * HOUR_MS;

/** A bucket of a series: [start, end), minute-aligned, in UTC. */
export interface SeriesBucketBounds {
  start: Date;
  end: Date;
}

const floorToMinute = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;
const mod = (a: number, b: number) => ((a % b) + b) % b;

/**
 * The buckets of a series over [start, end) in `timezone` (DESIGN §7): consecutive, ascending,
 * covering the period exactly; inner edges at
 * - `day`: the start of every local calendar date (startOfLocalDay: local midnight, the earlier
 *   one when midnight repeats, the clock change when it is skipped), so a DST day is a bucket of
 *   23 or 25 hours (23.5 or 24.5 on Lord Howe);
 * - `hour`: every instant at which the local clock shows a whole hour, and every clock change
 *   (so no bucket spans a change of offset and none is longer than an hour: New York's fall-back
 *   day has 25 buckets; Lord Howe's 30-minute changes make one half-hour bucket; Kathmandu's
 *   hours start at :15 UTC);
 * the first and last buckets clipped to the period. Edges are floored to whole minutes, the
 * rollups' resolution (only historical local mean times have offsets with seconds).
 */
export function seriesBuckets(period: { start: Date; end: Date }, granularity: SeriesGranularity, timezone: string): SeriesBucketBounds[] {
  if (!isIanaTimezone(timezone)) throw new RangeError(`not an IANA time zone: ${JSON.stringify(timezone)}`);
  const zone = IANAZone.create(timezone);
  const start = period.start.getTime();
  const end = period.end.getTime();
  if (!(start < end)) return [];
  const edges = [start];
  const next = granularity === 'day' ? (t: number) => nextLocalDayStart(t, zone, timezone) : (t: number) => nextHourEdge(t, zone);
  let t = granularity === 'day' ? startOfLocalDay(period.start, timezone).getTime() : start;
  for (;;) {
    t = next(t);
    const edge = floorToMinute(t);
    if (edge >= end) break;
    if (edge > edges[edges.length - 1]) edges.push(edge);
  }
  edges.push(end);
  const buckets: SeriesBucketBounds[] = [];
  for (let i = 0; i + 1 < edges.length; i++) buckets.push({ start: new Date(edges[i]), end: new Date(edges[i + 1]) });
  return buckets;
}

/**
 * The start of the local date after the one that starts at `dayStart`. Usually 24 hours later:
 * when the offset is the same then and the local clock there shows midnight. Otherwise (a clock
 * change in between, or a date that began at a skipped midnight's clock change) the start of
 * the date of an instant 36 hours on, which is inside the next date whatever its length.
 */
function nextLocalDayStart(dayStart: number, zone: IANAZone, timezone: string): number {
  const offsetMs = zone.offset(dayStart) * MINUTE_MS;
  const candidate = dayStart + DAY_MS;
  if (mod(dayStart + offsetMs, DAY_MS) === 0 && zone.offset(candidate) * MINUTE_MS === offsetMs) return candidate;
  return startOfLocalDay(new Date(dayStart + 36 * HOUR_MS), timezone).getTime();
}

/**
 * The first instant after `t` at which the local clock shows a whole hour, or the clock
 * changes, whichever is first. Clock changes are months apart, so comparing the offsets at `t`
 * and at the next whole hour tells whether one lies between; if so it is found by bisection to
 * the minute.
 */
function nextHourEdge(t: number, zone: IANAZone): number {
  const offset = zone.offset(t);
  const nextHour = t + HOUR_MS - mod(t + offset * MINUTE_MS, HOUR_MS);
  if (zone.offset(nextHour) === offset) return nextHour;
  let low = t;
  let high = nextHour;
  while (high - low > MINUTE_MS) {
    const middle = low + Math.max(MINUTE_MS, floorToMinute((high - low) / 2));
    if (zone.offset(middle) === offset) low = middle;
    else high = middle;
  }
  return high;
}
