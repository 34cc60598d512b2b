import fc from 'fast-check';
import { seriesBuckets } from '../../apps/reporting-projection/src/rules/series-buckets.js';
import { ReferenceCalendar } from '../support/reference-series.js';

/**
 * The bucket edges of report series (DESIGN §7): local midnights (day) and local whole hours and
 * clock changes (hour) of the reporting timezone, the first and last bucket clipped to the
 * period. Hand-checked DST days, then a property against the independent minute-by-minute
 * calendar of test/support/reference-series.ts around every kind of clock change.
 */

const HOUR = 3_600_000;
const t = (iso: string) => new Date(iso);
const shape = (buckets: { start: Date; end: Date }[]) => buckets.map((b) => [b.start.toISOString(), b.end.toISOString()]);
const lengthsInMinutes = (buckets: { start: Date; end: Date }[]) => buckets.map((b) => (b.end.getTime() - b.start.getTime()) / 60_000);

describe('day buckets', () => {
  it('make the New York spring-forward day 23 hours and the fall-back day 25, clipped to the period', () => {
    expect(shape(seriesBuckets({ start: t('2024-03-09T12:00:00Z'), end: t('2024-03-12T12:00:00Z') }, 'day', 'America/New_York'))).toEqual([
      ['2024-03-09T12:00:00.000Z', '2024-03-10T05:00:00.000Z'],
      ['2024-03-10T05:00:00.000Z', '2024-03-11T04:00:00.000Z'],
      ['2024-03-11T04:00:00.000Z', '2024-03-12T04:00:00.000Z'],
      ['2024-03-12T04:00:00.000Z', '2024-03-12T12:00:00.000Z'],
    ]);
    const fall = seriesBuckets({ start: t('2024-11-03T04:00:00Z'), end: t('2024-11-04T05:00:00Z') }, 'day', 'America/New_York');
    expect(lengthsInMinutes(fall)).toEqual([25 * 60]);
  });

  it('make the Lord Howe DST days 23.5 and 24.5 hours', () => {
    const spring = seriesBuckets({ start: t('2024-10-05T13:30:00Z'), end: t('2024-10-07T13:00:00Z') }, 'day', 'Australia/Lord_Howe');
    expect(shape(spring)).toEqual([
      ['2024-10-05T13:30:00.000Z', '2024-10-06T13:00:00.000Z'],
      ['2024-10-06T13:00:00.000Z', '2024-10-07T13:00:00.000Z'],
    ]);
    expect(lengthsInMinutes(spring)).toEqual([23.5 * 60, 24 * 60]);
    const autumn = seriesBuckets({ start: t('2024-04-06T13:00:00Z'), end: t('2024-04-07T13:30:00Z') }, 'day', 'Australia/Lord_Howe');
    expect(lengthsInMinutes(autumn)).toEqual([24.5 * 60]);
  });

  it('start Kathmandu days at 18:15 UTC', () => {
    const buckets = seriesBuckets({ start: t('2024-11-01T00:00:00Z'), end: t('2024-11-03T00:00:00Z') }, 'day', 'Asia/Kathmandu');
    expect(shape(buckets).flat().slice(1, -1)).toEqual(['2024-11-01T18:15:00.000Z', '2024-11-01T18:15:00.000Z', '2024-11-02T18:15:00.000Z', '2024-11-02T18:15:00.000Z']);
  });

  it('start a date whose midnight is skipped at the clock change, and one whose midnight repeats at the first midnight', () => {
    // America/Havana 2013-03-10: 00:00 CST became 01:00 CDT (05:00 UTC).
    expect(shape(seriesBuckets({ start: t('2013-03-09T05:00:00Z'), end: t('2013-03-11T04:00:00Z') }, 'day', 'America/Havana'))).toEqual([
      ['2013-03-09T05:00:00.000Z', '2013-03-10T05:00:00.000Z'],
      ['2013-03-10T05:00:00.000Z', '2013-03-11T04:00:00.000Z'],
    ]);
    // America/Havana 2013-11-03: 01:00 CDT became 00:00 CST; the date starts at the first midnight (04:00 UTC) and lasts 25 hours.
    const repeated = seriesBuckets({ start: t('2013-11-02T12:00:00Z'), end: t('2013-11-04T12:00:00Z') }, 'day', 'America/Havana');
    expect(shape(repeated).map(([start]) => start)).toEqual(['2013-11-02T12:00:00.000Z', '2013-11-03T04:00:00.000Z', '2013-11-04T05:00:00.000Z']);
  });

  it('skip the day Samoa removed from its calendar (Pacific/Apia 2011-12-30)', () => {
    const buckets = seriesBuckets({ start: t('2011-12-29T10:00:00Z'), end: t('2011-12-31T10:00:00Z') }, 'day', 'Pacific/Apia');
    expect(shape(buckets)).toEqual([
      ['2011-12-29T10:00:00.000Z', '2011-12-30T10:00:00.000Z'],
      ['2011-12-30T10:00:00.000Z', '2011-12-31T10:00:00.000Z'],
    ]);
  });
});

describe('hour buckets', () => {
  it('give the New York DST days 23 and 25 buckets of one hour', () => {
    expect(lengthsInMinutes(seriesBuckets({ start: t('2024-03-10T05:00:00Z'), end: t('2024-03-11T04:00:00Z') }, 'hour', 'America/New_York'))).toEqual(Array(23).fill(60));
    const fall = seriesBuckets({ start: t('2024-11-03T04:00:00Z'), end: t('2024-11-04T05:00:00Z') }, 'hour', 'America/New_York');
    expect(lengthsInMinutes(fall)).toEqual(Array(25).fill(60));
    // 01:00 EDT and 01:00 EST are two buckets.
    expect(shape(fall).slice(1, 3)).toEqual([
      ['2024-11-03T05:00:00.000Z', '2024-11-03T06:00:00.000Z'],
      ['2024-11-03T06:00:00.000Z', '2024-11-03T07:00:00.000Z'],
    ]);
  });

  it('cut a half-hour bucket at the Lord Howe clock changes, never spanning one', () => {
    const spring = seriesBuckets({ start: t('2024-10-05T13:30:00Z'), end: t('2024-10-06T13:00:00Z') }, 'hour', 'Australia/Lord_Howe');
    expect(lengthsInMinutes(spring)).toEqual([60, 60, 30, ...Array(21).fill(60)]);
    // 02:00 LHST became 02:30 LHDT at 15:30 UTC: the 02:30–03:00 bucket.
    expect(shape(spring)[2]).toEqual(['2024-10-05T15:30:00.000Z', '2024-10-05T16:00:00.000Z']);
    const autumn = seriesBuckets({ start: t('2024-04-06T13:00:00Z'), end: t('2024-04-07T13:30:00Z') }, 'hour', 'Australia/Lord_Howe');
    expect(lengthsInMinutes(autumn)).toEqual([60, 60, 30, ...Array(22).fill(60)]);
  });

  it('start Kathmandu hours at :15 UTC, clipped to a rolling period', () => {
    const buckets = seriesBuckets({ start: t('2024-11-02T13:07:00Z'), end: t('2024-11-03T13:07:00Z') }, 'hour', 'Asia/Kathmandu');
    expect(buckets).toHaveLength(25);
    expect(shape(buckets)[0]).toEqual(['2024-11-02T13:07:00.000Z', '2024-11-02T13:15:00.000Z']);
    expect(shape(buckets)[24]).toEqual(['2024-11-03T12:15:00.000Z', '2024-11-03T13:07:00.000Z']);
  });

  it('gives no bucket for an empty period', () => {
    expect(seriesBuckets({ start: t('2024-11-03T04:00:00Z'), end: t('2024-11-03T04:00:00Z') }, 'hour', 'UTC')).toEqual([]);
  });
});

/** Zones with every kind of clock change, each around one of its changes. */
const ANCHORS: [string, string][] = [
  ['America/New_York', '2024-03-10T07:00:00Z'],
  ['America/New_York', '2024-11-03T06:00:00Z'],
  ['Australia/Lord_Howe', '2024-04-06T15:00:00Z'],
  ['Australia/Lord_Howe', '2024-10-05T15:30:00Z'],
  ['America/Havana', '2013-03-10T05:00:00Z'],
  ['America/Havana', '2013-11-03T05:00:00Z'],
  ['America/Santiago', '2022-09-11T04:00:00Z'],
  ['Pacific/Apia', '2011-12-30T10:00:00Z'],
  ['Pacific/Chatham', '2024-04-06T14:00:00Z'],
  ['Asia/Kathmandu', '2024-11-03T00:00:00Z'],
  ['UTC', '2024-11-03T00:00:00Z'],
];
const calendars = new Map<string, ReferenceCalendar>();
function calendarFor(index: number): ReferenceCalendar {
  const [zone, at] = ANCHORS[index];
  const key = `${zone} ${at}`;
  let calendar = calendars.get(key);
  if (!calendar) calendars.set(key, (calendar = new ReferenceCalendar(zone, new Date(Date.parse(at) - 6 * 24 * HOUR), new Date(Date.parse(at) + 6 * 24 * HOUR))));
  return calendar;
}

it('equals the minute-by-minute reference calendar around every kind of clock change (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: ANCHORS.length - 1 }),
      fc.constantFrom('hour' as const, 'day' as const),
      fc.integer({ min: -3 * 24 * 60, max: 3 * 24 * 60 }),
      fc.integer({ min: 0, max: 3 * 24 * 60 }),
      (anchor, granularity, offsetMinutes, lengthMinutes) => {
        const calendar = calendarFor(anchor);
        const start = new Date(Date.parse(ANCHORS[anchor][1]) + offsetMinutes * 60_000);
        const end = new Date(start.getTime() + lengthMinutes * 60_000);
        const expected = calendar.buckets(granularity, start, end).map((b) => [new Date(b.start).toISOString(), new Date(b.end).toISOString()]);
        expect(shape(seriesBuckets({ start, end }, granularity, calendar.zone))).toEqual(expected);
      },
    ),
    { numRuns: 400 },
  );
});
