import fc from 'fast-check';
import { decomposePeriod, type BucketRange, type PeriodBuckets } from '../../apps/reporting-projection/src/rules/rollup-ranges.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SIZE_MS: Record<keyof PeriodBuckets, number> = { days: DAY, hours: HOUR, minutes: MINUTE };
const at = (iso: string) => new Date(iso);
const range = (from: string | null, to: string): BucketRange => ({ from: from === null ? null : at(from), to: at(to) });

/** Number of buckets a range selects (an open start counts as one run). */
function bucketCount(ranges: BucketRange[], size: number): number {
  return ranges.reduce((sum, r) => sum + (r.from === null ? 1 : (r.to.getTime() - r.from.getTime()) / size), 0);
}

/** Naive membership: the bucket of the given size holding a minute is selected by some range. */
function timesSelected(minute: number, buckets: PeriodBuckets): number {
  let hits = 0;
  for (const size of ['days', 'hours', 'minutes'] as const) {
    const bucketStart = Math.floor(minute / SIZE_MS[size]) * SIZE_MS[size];
    for (const r of buckets[size]) {
      if ((r.from === null || r.from.getTime() <= bucketStart) && bucketStart < r.to.getTime()) hits += 1;
    }
  }
  return hits;
}

/** Structural check: aligned, non-empty runs that tile [start, end) without gaps or overlaps. */
function expectTiling(buckets: PeriodBuckets, start: number | null, end: number): void {
  const runs: { from: number; to: number; size: number }[] = [];
  for (const size of ['days', 'hours', 'minutes'] as const) {
    for (const r of buckets[size]) {
      const from = r.from === null ? Number.NEGATIVE_INFINITY : r.from.getTime();
      const to = r.to.getTime();
      if (r.from !== null) {
        expect(from % SIZE_MS[size]).toBe(0);
        expect(from).toBeLessThan(to);
      }
      expect(to % SIZE_MS[size]).toBe(0);
      runs.push({ from, to, size: SIZE_MS[size] });
    }
  }
  runs.sort((a, b) => a.from - b.from);
  if (start === end) {
    expect(runs).toEqual([]);
    return;
  }
  expect(runs[0].from).toBe(start ?? Number.NEGATIVE_INFINITY);
  for (let i = 1; i < runs.length; i++) expect(runs[i].from).toBe(runs[i - 1].to);
  expect(runs[runs.length - 1].to).toBe(end);
}

/** Fewest buckets: no run of a finer size contains a whole bucket of the next coarser size. */
function expectMinimal(buckets: PeriodBuckets): void {
  expect(buckets.days.length).toBeLessThanOrEqual(1);
  expect(buckets.hours.length).toBeLessThanOrEqual(2);
  expect(buckets.minutes.length).toBeLessThanOrEqual(2);
  for (const [finer, coarser] of [
    ['hours', DAY],
    ['minutes', HOUR],
  ] as const) {
    for (const r of buckets[finer]) {
      const from = r.from!.getTime();
      const firstWhole = Math.ceil(from / coarser) * coarser;
      expect(firstWhole + coarser).toBeGreaterThan(r.to.getTime());
    }
  }
}

const minuteInstant = (min: number, max: number) =>
  fc.integer({ min: min / MINUTE, max: max / MINUTE }).map((minute) => minute * MINUTE);
const EPOCH_2020 = Date.parse('2020-01-01T00:00:00Z');
const EPOCH_2030 = Date.parse('2030-01-01T00:00:00Z');

describe('decomposePeriod', () => {
  it('uses whole days in the middle, hours at the day edges and minutes at the hour edges', () => {
    expect(decomposePeriod({ start: at('2024-03-01T22:15:00Z'), end: at('2024-03-04T02:30:00Z') })).toEqual({
      days: [range('2024-03-02T00:00:00Z', '2024-03-04T00:00:00Z')],
      hours: [range('2024-03-01T23:00:00Z', '2024-03-02T00:00:00Z'), range('2024-03-04T00:00:00Z', '2024-03-04T02:00:00Z')],
      minutes: [
        range('2024-03-01T22:15:00Z', '2024-03-01T23:00:00Z'),
        range('2024-03-04T02:00:00Z', '2024-03-04T02:30:00Z'),
      ],
    });
  });

  it('uses no day bucket when no whole UTC day fits', () => {
    expect(decomposePeriod({ start: at('2024-03-01T05:00:00Z'), end: at('2024-03-02T04:59:00Z') })).toEqual({
      days: [],
      hours: [range('2024-03-01T05:00:00Z', '2024-03-02T04:00:00Z')],
      minutes: [range('2024-03-02T04:00:00Z', '2024-03-02T04:59:00Z')],
    });
  });

  it('uses only minutes inside one hour', () => {
    expect(decomposePeriod({ start: at('2024-03-01T05:10:00Z'), end: at('2024-03-01T05:50:00Z') })).toEqual({
      days: [],
      hours: [],
      minutes: [range('2024-03-01T05:10:00Z', '2024-03-01T05:50:00Z')],
    });
  });

  it('uses one day bucket for exactly one UTC day and nothing for an empty period', () => {
    expect(decomposePeriod({ start: at('2024-03-01T00:00:00Z'), end: at('2024-03-02T00:00:00Z') })).toEqual({
      days: [range('2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z')],
      hours: [],
      minutes: [],
    });
    expect(decomposePeriod({ start: at('2024-03-01T07:00:00Z'), end: at('2024-03-01T07:00:00Z') })).toEqual({
      days: [],
      hours: [],
      minutes: [],
    });
  });

  it('takes every day from the beginning for an open start (all)', () => {
    expect(decomposePeriod({ start: null, end: at('2024-03-04T02:30:00Z') })).toEqual({
      days: [range(null, '2024-03-04T00:00:00Z')],
      hours: [range('2024-03-04T00:00:00Z', '2024-03-04T02:00:00Z')],
      minutes: [range('2024-03-04T02:00:00Z', '2024-03-04T02:30:00Z')],
    });
    expect(decomposePeriod({ start: null, end: at('2024-03-04T00:00:00Z') })).toEqual({
      days: [range(null, '2024-03-04T00:00:00Z')],
      hours: [],
      minutes: [],
    });
  });

  it('handles a today period in Asia/Kathmandu (a +05:45 day start)', () => {
    const buckets = decomposePeriod({ start: at('2024-06-01T18:15:00Z'), end: at('2024-06-02T10:07:00Z') });
    expect(buckets).toEqual({
      days: [],
      hours: [range('2024-06-01T19:00:00Z', '2024-06-02T10:00:00Z')],
      minutes: [
        range('2024-06-01T18:15:00Z', '2024-06-01T19:00:00Z'),
        range('2024-06-02T10:00:00Z', '2024-06-02T10:07:00Z'),
      ],
    });
  });

  it('selects every minute of [start, end) exactly once and no other minute (brute force)', () => {
    fc.assert(
      fc.property(
        minuteInstant(EPOCH_2020, EPOCH_2030),
        fc.integer({ min: 0, max: 3 * 24 * 60 }),
        fc.boolean(),
        (start, lengthMinutes, openStart) => {
          const end = start + lengthMinutes * MINUTE;
          const buckets = decomposePeriod({ start: openStart ? null : new Date(start), end: new Date(end) });
          // Every minute of the period, plus a margin of a day and a half on each side.
          const wrong: string[] = [];
          for (let minute = start - 36 * HOUR; minute < end + 36 * HOUR; minute += MINUTE) {
            const inside = minute < end && (openStart || minute >= start);
            const selected = timesSelected(minute, buckets);
            if (selected !== (inside ? 1 : 0)) wrong.push(`${new Date(minute).toISOString()} selected ${selected}×`);
          }
          expect(wrong).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('tiles [start, end) exactly with the fewest buckets for long periods', () => {
    fc.assert(
      fc.property(
        minuteInstant(EPOCH_2020, EPOCH_2030),
        fc.integer({ min: 0, max: 400 * 24 * 60 }),
        fc.boolean(),
        (start, lengthMinutes, openStart) => {
          const end = start + lengthMinutes * MINUTE;
          const buckets = decomposePeriod({ start: openStart ? null : new Date(start), end: new Date(end) });
          expectTiling(buckets, openStart ? null : start, end);
          if (!openStart) expectMinimal(buckets);
          const minutes = openStart ? 0 : lengthMinutes;
          if (!openStart) {
            expect(
              bucketCount(buckets.days, DAY) * 1440 + bucketCount(buckets.hours, HOUR) * 60 + bucketCount(buckets.minutes, MINUTE),
            ).toBe(minutes);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('needs at most 90 day + 46 hour + 118 minute buckets for a 90d period', () => {
    fc.assert(
      fc.property(minuteInstant(EPOCH_2020, EPOCH_2030), (end) => {
        const buckets = decomposePeriod({ start: new Date(end - 90 * DAY), end: new Date(end) });
        expect(bucketCount(buckets.days, DAY)).toBeLessThanOrEqual(90);
        expect(bucketCount(buckets.hours, HOUR)).toBeLessThanOrEqual(46);
        expect(bucketCount(buckets.minutes, MINUTE)).toBeLessThanOrEqual(118);
      }),
      { numRuns: 500 },
    );
    // The worst edges: one minute after the hour after the day start, one minute before the end.
    const worst = decomposePeriod({ start: at('2024-01-01T00:01:00Z'), end: at('2024-03-30T23:59:00Z') });
    expect(bucketCount(worst.days, DAY)).toBe(88);
    expect(bucketCount(worst.hours, HOUR)).toBe(46);
    expect(bucketCount(worst.minutes, MINUTE)).toBe(118);
    const aligned = decomposePeriod({ start: at('2024-01-01T00:00:00Z'), end: at('2024-03-31T00:00:00Z') });
    expect(bucketCount(aligned.days, DAY)).toBe(90);
    expect(aligned.hours).toEqual([]);
    expect(aligned.minutes).toEqual([]);
  });

  it('requires minute-aligned boundaries and start ≤ end', () => {
    expect(() => decomposePeriod({ start: at('2024-03-01T00:00:30Z'), end: at('2024-03-02T00:00:00Z') })).toThrow(RangeError);
    expect(() => decomposePeriod({ start: null, end: at('2024-03-02T00:00:00.001Z') })).toThrow(RangeError);
    expect(() => decomposePeriod({ start: at('2024-03-02T00:01:00Z'), end: at('2024-03-02T00:00:00Z') })).toThrow(RangeError);
  });
});
