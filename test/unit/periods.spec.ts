import fc from 'fast-check';
import { TIME_RANGES } from '#libs/contracts';
import { isIanaTimezone, reportPeriod, startOfLocalDay } from '../../apps/reporting-projection/src/rules/periods.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (iso: string) => new Date(iso);

/** Independent of luxon: the local calendar date of an instant, from Intl parts. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function intlLocalDate(instant: Date, timeZone: string): string {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  const parts = formatter
    .formatToParts(instant)
    .reduce<Record<string, string>>((acc, part) => ({ ...acc, [part.type]: part.value }), {});
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** Brute force: the earliest minute within the 30 h before `instant` on the same local date. */
function bruteStartOfLocalDay(instant: Date, timeZone: string): Date {
  const date = intlLocalDate(instant, timeZone);
  let t = Math.floor(instant.getTime() / 60_000) * 60_000;
  while (intlLocalDate(new Date(t - 60_000), timeZone) === date) t -= 60_000;
  return new Date(t);
}

describe('startOfLocalDay', () => {
  it.each([
    // [zone, instant, expected start, why]
    ['UTC', '2024-06-15T13:37:00Z', '2024-06-15T00:00:00.000Z', 'UTC midnight'],
    ['UTC', '2024-06-15T00:00:00Z', '2024-06-15T00:00:00.000Z', 'an instant at midnight starts its own day'],
    ['Etc/UTC', '2024-06-15T23:59:00Z', '2024-06-15T00:00:00.000Z', 'link of UTC'],
    // New York spring forward 2024-03-10 02:00 → 03:00: the day starts at 00:00 EST (−05:00).
    ['America/New_York', '2024-03-10T15:00:00Z', '2024-03-10T05:00:00.000Z', 'spring-forward day'],
    ['America/New_York', '2024-03-11T03:59:00Z', '2024-03-10T05:00:00.000Z', 'late on the 23-hour day'],
    ['America/New_York', '2024-03-11T04:00:00Z', '2024-03-11T04:00:00.000Z', 'next day starts at 00:00 EDT'],
    // Fall back 2024-11-03 02:00 → 01:00: the day starts at 00:00 EDT (−04:00).
    ['America/New_York', '2024-11-03T15:00:00Z', '2024-11-03T04:00:00.000Z', 'fall-back day'],
    ['America/New_York', '2024-11-04T04:59:00Z', '2024-11-03T04:00:00.000Z', 'late on the 25-hour day'],
    ['America/New_York', '2024-11-04T05:00:00Z', '2024-11-04T05:00:00.000Z', 'next day starts at 00:00 EST'],
    // Havana skips midnight on 2013-03-10 (00:00 CST → 01:00 CDT): the day starts at 01:00 −04:00.
    ['America/Havana', '2013-03-10T12:00:00Z', '2013-03-10T05:00:00.000Z', 'skipped midnight'],
    ['America/Havana', '2013-03-10T05:00:00Z', '2013-03-10T05:00:00.000Z', 'the transition instant itself'],
    ['America/Havana', '2013-03-10T04:59:00Z', '2013-03-09T05:00:00.000Z', 'the minute before is the previous day'],
    // Havana repeats midnight on 2013-11-03 (01:00 CDT → 00:00 CST): the earlier midnight counts.
    ['America/Havana', '2013-11-03T12:00:00Z', '2013-11-03T04:00:00.000Z', 'repeated midnight, later in the day'],
    ['America/Havana', '2013-11-03T05:30:00Z', '2013-11-03T04:00:00.000Z', 'inside the second 00:xx hour'],
    // Santiago skips midnight on 2022-09-11 (00:00 −04 → 01:00 −03).
    ['America/Santiago', '2022-09-11T20:00:00Z', '2022-09-11T04:00:00.000Z', 'skipped midnight'],
    // Santiago falls back at 24:00 on 2022-04-02 (→ 23:00 −04): 2022-04-03 starts at 00:00 −04.
    ['America/Santiago', '2022-04-03T12:00:00Z', '2022-04-03T04:00:00.000Z', 'fall back across midnight'],
    // Kathmandu is +05:45.
    ['Asia/Kathmandu', '2024-06-01T18:14:00Z', '2024-05-31T18:15:00.000Z', '23:59 local'],
    ['Asia/Kathmandu', '2024-06-01T18:15:00Z', '2024-06-01T18:15:00.000Z', '00:00 local'],
    // Lord Howe: +10:30 standard, +11:00 summer; 30-minute shifts at 02:00 local.
    ['Australia/Lord_Howe', '2024-10-06T05:00:00Z', '2024-10-05T13:30:00.000Z', 'DST starts 2024-10-06 02:00 → 02:30'],
    ['Australia/Lord_Howe', '2024-10-07T12:59:00Z', '2024-10-06T13:00:00.000Z', 'first summer day starts at +11:00'],
    ['Australia/Lord_Howe', '2024-04-07T05:00:00Z', '2024-04-06T13:00:00.000Z', 'DST ends 2024-04-07 02:00 → 01:30'],
    ['Australia/Lord_Howe', '2024-04-08T05:00:00Z', '2024-04-07T13:30:00.000Z', 'first standard day at +10:30'],
  ])('%s %s → %s (%s)', (zone, instant, expected) => {
    const start = startOfLocalDay(at(instant), zone);
    expect(start.toISOString()).toBe(expected);
    expect(start).toEqual(bruteStartOfLocalDay(at(instant), zone));
  });

  it('agrees with an Intl brute force for random instants in zones with unusual transitions', () => {
    const zones = ['America/Havana', 'America/Santiago', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/New_York', 'Asia/Beirut'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.parse('2008-01-01T00:00:00Z') / 60_000, max: Date.parse('2030-01-01T00:00:00Z') / 60_000 }),
        (zone, minute) => {
          const instant = new Date(minute * 60_000);
          const start = startOfLocalDay(instant, zone);
          expect(start).toEqual(bruteStartOfLocalDay(instant, zone));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('finds the day start on every skipped-midnight day around the transition', () => {
    // The instants right after a skipped midnight and a little later the same day.
    for (const [zone, transition] of [
      ['America/Havana', '2013-03-10T05:00:00Z'],
      ['America/Santiago', '2022-09-11T04:00:00Z'],
      ['America/Asuncion', '2022-10-02T04:00:00Z'],
      ['Asia/Beirut', '2023-03-25T22:00:00Z'],
    ] as const) {
      for (const later of [0, 1, 60, 600]) {
        const instant = new Date(Date.parse(transition) + later * 60_000);
        expect(startOfLocalDay(instant, zone).toISOString()).toBe(new Date(transition).toISOString());
        expect(intlLocalDate(new Date(Date.parse(transition) - 60_000), zone)).not.toBe(intlLocalDate(instant, zone));
      }
    }
  });

  it('rejects an unknown zone or an invalid instant', () => {
    expect(() => startOfLocalDay(at('2024-01-01T00:00:00Z'), 'Mars/Base')).toThrow(RangeError);
    expect(() => startOfLocalDay(at('2024-01-01T00:00:00Z'), '+05:00')).toThrow(RangeError);
    expect(() => startOfLocalDay(new Date(Number.NaN), 'UTC')).toThrow(RangeError);
  });
});

describe('reportPeriod', () => {
  const processedThrough = at('2024-11-03T15:42:00Z');

  it('today: from the start of the local date to the processed cutoff', () => {
    expect(reportPeriod('today', processedThrough, 'UTC')).toEqual({
      start: at('2024-11-03T00:00:00Z'),
      end: processedThrough,
    });
    expect(reportPeriod('today', processedThrough, 'America/New_York')).toEqual({
      start: at('2024-11-03T04:00:00Z'),
      end: processedThrough,
    });
    expect(reportPeriod('today', at('2024-03-10T15:42:00Z'), 'America/New_York').start).toEqual(
      at('2024-03-10T05:00:00Z'),
    );
    expect(reportPeriod('today', at('2013-03-10T15:42:00Z'), 'America/Havana').start).toEqual(
      at('2013-03-10T05:00:00Z'),
    );
    expect(reportPeriod('today', processedThrough, 'Asia/Kathmandu').start).toEqual(at('2024-11-02T18:15:00Z'));
  });

  it('today is empty at the very start of a local day', () => {
    const midnight = at('2024-11-03T04:00:00Z');
    expect(reportPeriod('today', midnight, 'America/New_York')).toEqual({ start: midnight, end: midnight });
  });

  it.each([
    ['1d', 1],
    ['7d', 7],
    ['30d', 30],
    ['90d', 90],
  ] as const)('%s is a rolling window of exactly %i × 24 h ending at the cutoff', (range, days) => {
    for (const zone of ['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu']) {
      // Both windows span a daylight-saving change in New York and Lord Howe.
      for (const end of [processedThrough, at('2024-03-10T12:00:00Z'), at('2024-10-07T00:00:00Z')]) {
        const period = reportPeriod(range, end, zone);
        expect(period.end).toEqual(end);
        expect(period.start).not.toBeNull();
        expect(end.getTime() - period.start!.getTime()).toBe(days * DAY);
      }
    }
  });

  it('all starts at the beginning of history', () => {
    expect(reportPeriod('all', processedThrough, 'Asia/Kathmandu')).toEqual({ start: null, end: processedThrough });
  });

  it('every time range yields a period ending at the cutoff that does not start after it', () => {
    for (const range of TIME_RANGES) {
      const period = reportPeriod(range, processedThrough, 'Australia/Lord_Howe');
      expect(period.end).toEqual(processedThrough);
      if (period.start !== null) expect(period.start.getTime()).toBeLessThanOrEqual(processedThrough.getTime());
    }
  });

  it('returns a copy of the cutoff, not the caller’s Date', () => {
    const cutoff = at('2024-11-03T15:42:00Z');
    expect(reportPeriod('7d', cutoff, 'UTC').end).not.toBe(cutoff);
  });

  it('requires a minute-aligned cutoff and a known range', () => {
    expect(() => reportPeriod('7d', at('2024-11-03T15:42:01Z'), 'UTC')).toThrow(RangeError);
    expect(() => reportPeriod('today', at('2024-11-03T15:42:00.001Z'), 'UTC')).toThrow(RangeError);
    expect(() => reportPeriod('all', new Date(Number.NaN), 'UTC')).toThrow(RangeError);
    expect(() => reportPeriod('2d' as never, processedThrough, 'UTC')).toThrow(RangeError);
  });
});

describe('isIanaTimezone', () => {
  it.each(['UTC', 'Etc/UTC', 'Asia/Kathmandu', 'Asia/Katmandu', 'Australia/Lord_Howe', 'America/Port-au-Prince', 'America/Argentina/La_Rioja', 'US/Eastern', 'Etc/GMT+5', 'EST5EDT', 'Europe/Kiev', 'Europe/Kyiv'])(
    'accepts %s',
    (name) => expect(isIanaTimezone(name)).toBe(true),
  );

  it.each([
    '+05:00',
    '-03:00',
    '+0545',
    'UTC+1',
    'GMT-3',
    'Z',
    '',
    ' ',
    ' UTC',
    'Asia/Kathmandu ',
    'asia/kathmandu',
    'Mars/Base',
    'Asia/',
    '/UTC',
    'Europe/../UTC',
  ])('rejects %j', (name) => expect(isIanaTimezone(name)).toBe(false));

  it.each([null, undefined, 0, 5.75, true, {}, ['UTC'], new String('UTC')])('rejects the non-string %p', (value) =>
    expect(isIanaTimezone(value)).toBe(false),
  );
});
