import { assertMinuteAligned, DAY_MS, HOUR_MS, MINUTE_MS, type Period } from './periods.js';

/**
 * A run of rollup buckets of one size, half-open over bucket START times (UTC):
 * every bucket whose start is in [from, to). `from` null means from the first bucket.
 */
export interface BucketRange {
  from: Date | null;
  to: Date;
}

/** The buckets of each size whose union is exactly the minutes of a period. */
export interface PeriodBuckets {
  days: BucketRange[];
  hours: BucketRange[];
  minutes: BucketRange[];
}

type Size = keyof PeriodBuckets;

/** Bucket sizes from the coarsest to the finest. */
const SIZES: readonly { size: Size; ms: number }[] = [
  { size: 'days', ms: DAY_MS },
  { size: 'hours', ms: HOUR_MS },
  { size: 'minutes', ms: MINUTE_MS },
];

const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;

/**
 * Splits a period into the fewest UTC rollup buckets (DESIGN §6 "Reports sum the fewest
 * buckets"): whole days in the middle, whole hours at the day edges, minutes at the hour
 * edges. Each minute of [start, end) lies in exactly one selected bucket and no other minute
 * does. An open start (`all`) takes every day bucket before the last whole day.
 * For any period of at most 90 days that is at most 90 + 46 + 118 buckets.
 */
export function decomposePeriod(period: Period): PeriodBuckets {
  assertMinuteAligned(period.end, 'period end');
  if (period.start !== null) assertMinuteAligned(period.start, 'period start');
  const end = period.end.getTime();
  const buckets: PeriodBuckets = { days: [], hours: [], minutes: [] };

  if (period.start === null) {
    const lastDay = floorTo(end, DAY_MS);
    buckets.days.push({ from: null, to: new Date(lastDay) });
    split(lastDay, end, 1, buckets);
    return buckets;
  }
  const start = period.start.getTime();
  if (start > end) throw new RangeError('period start is after its end');
  split(start, end, 0, buckets);
  return buckets;
}

/** Whole buckets of SIZES[level] in the middle of [from, to); the edges go to finer sizes. */
function split(from: number, to: number, level: number, buckets: PeriodBuckets): void {
  if (from >= to) return;
  const { size, ms } = SIZES[level];
  const first = ceilTo(from, ms);
  const last = floorTo(to, ms);
  if (level === SIZES.length - 1 || first < last) {
    // The finest size is exact here: both ends are aligned to it.
    buckets[size].push({ from: new Date(first), to: new Date(last) });
    split(from, first, level + 1, buckets);
    split(last, to, level + 1, buckets);
  } else {
    split(from, to, level + 1, buckets);
  }
}
