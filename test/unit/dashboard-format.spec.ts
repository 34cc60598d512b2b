import fc from 'fast-check';
import { formatCount, formatMicros, formatMoney, microsToChartUnits, toMicros } from '../../apps/dashboard/src/format/micros.js';
import { bucketLabel, formatInstant, formatUtc, todayInZone } from '../../apps/dashboard/src/format/time.js';

describe('formatMicros: integer micros to an exact decimal (no float anywhere)', () => {
  it.each([
    [0, '0.00'],
    [1, '0.000001'],
    [10_000, '0.01'],
    [1_500_000, '1.50'],
    [1_234_567, '1.234567'],
    [1_000_000_000, '1,000.00'],
    [123_456_789_012, '123,456.789012'],
    [-5, '-0.000005'],
    [-1_500_000, '-1.50'],
    [-123_456_789_000, '-123,456.789'],
  ])('%p micros → %p', (micros, text) => {
    expect(formatMicros(micros)).toBe(text);
  });

  it('keeps every digit of the largest safe integer and beyond it (BigInt, decimal strings)', () => {
    expect(formatMicros(Number.MAX_SAFE_INTEGER)).toBe('9,007,199,254.740991');
    expect(formatMicros(-Number.MAX_SAFE_INTEGER)).toBe('-9,007,199,254.740991');
    expect(formatMicros(2n ** 63n - 1n)).toBe('9,223,372,036,854.775807');
    expect(formatMicros('-100000000000000000000001')).toBe('-100,000,000,000,000,000.000001');
  });

  it('never shows the float artefacts of 0.1 + 0.2', () => {
    expect(formatMicros(100_000 + 200_000)).toBe('0.30');
    expect(0.1 + 0.2).not.toBe(0.3); // what a float would have shown
  });

  it('refuses amounts that are not integers rather than rounding them', () => {
    expect(() => formatMicros(1.5)).toThrow(RangeError);
    expect(() => formatMicros(Number.MAX_SAFE_INTEGER + 2)).toThrow(RangeError);
    expect(() => formatMicros(Number.NaN)).toThrow(RangeError);
    expect(() => formatMicros('1.5')).toThrow(RangeError);
    expect(() => formatMicros('12e3')).toThrow(RangeError);
  });

  it('reads back to the same integer for any amount (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }), (micros) => {
        const text = formatMicros(micros, 0);
        const [whole, fraction = ''] = text.replace(/,/g, '').replace('-', '').split('.');
        const magnitude = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0') || '0');
        expect(text.startsWith('-') ? -magnitude : magnitude).toBe(micros);
        expect(text).toMatch(/^-?\d{1,3}(,\d{3})*(\.\d{1,6})?$/);
      }),
    );
  });

  it('formats money with its currency, counts with grouping', () => {
    expect(formatMoney(12_345_670_000, 'USD')).toBe('USD 12,345.67');
    expect(formatMoney(-750_000, 'EUR')).toBe('EUR -0.75');
    expect(formatCount(1_234_567)).toBe('1,234,567');
    expect(formatCount(-1000)).toBe('-1,000');
    expect(formatCount(0)).toBe('0');
    expect(() => formatCount(1.5)).toThrow(RangeError);
    expect(toMicros('42')).toBe(42n);
  });

  it('gives the chart a float of major units (geometry only)', () => {
    expect(microsToChartUnits(1_500_000)).toBe(1.5);
    expect(microsToChartUnits(-250_000)).toBe(-0.25);
    expect(microsToChartUnits(Number.MAX_SAFE_INTEGER)).toBeCloseTo(9_007_199_254.740991, 3);
  });
});

describe('todayInZone: when "today" starts in the reporting timezone', () => {
  it('Asia/Kathmandu (UTC+05:45): local midnight is 18:15 UTC the day before', () => {
    const today = todayInZone(new Date('2026-03-10T00:00:00Z'), 'Asia/Kathmandu');
    expect(today.start.toISOString()).toBe('2026-03-09T18:15:00.000Z');
    expect(today.nextStart.toISOString()).toBe('2026-03-10T18:15:00.000Z');
    expect(today).toMatchObject({ localStartLabel: '00:00', offsetLabel: '+05:45', hours: 24, dateLabel: 'Tuesday, 10 March 2026', utcStartLabel: '2026-03-09 18:15 UTC' });
  });

  it('just before and at local midnight in Kathmandu the date changes', () => {
    expect(todayInZone(new Date('2026-03-10T18:14:59Z'), 'Asia/Kathmandu').start.toISOString()).toBe('2026-03-09T18:15:00.000Z');
    expect(todayInZone(new Date('2026-03-10T18:15:00Z'), 'Asia/Kathmandu').start.toISOString()).toBe('2026-03-10T18:15:00.000Z');
  });

  it('America/New_York on its spring-forward day: 23 hours from 05:00 UTC', () => {
    const today = todayInZone(new Date('2026-03-08T15:00:00Z'), 'America/New_York');
    expect(today.start.toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(today.nextStart.toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(today).toMatchObject({ localStartLabel: '00:00', offsetLabel: '-05:00', hours: 23 });
  });

  it('America/New_York on its fall-back day: 25 hours from 04:00 UTC', () => {
    const today = todayInZone(new Date('2026-11-01T12:00:00Z'), 'America/New_York');
    expect(today.start.toISOString()).toBe('2026-11-01T04:00:00.000Z');
    expect(today.hours).toBe(25);
  });

  it('America/Santiago 2022-09-11, where midnight was skipped: the day starts at 01:00', () => {
    const today = todayInZone(new Date('2022-09-11T12:00:00Z'), 'America/Santiago');
    expect(today.start.toISOString()).toBe('2022-09-11T04:00:00.000Z');
    expect(today).toMatchObject({ localStartLabel: '01:00', hours: 23 });
  });

  it('Australia/Lord_Howe on its half-hour DST change: 23.5 hours', () => {
    const today = todayInZone(new Date('2026-10-04T06:00:00Z'), 'Australia/Lord_Howe');
    expect(today.localStartLabel).toBe('00:00');
    expect(today.hours).toBe(23.5);
  });

  it('refuses a name that is not an IANA zone', () => {
    expect(() => todayInZone(new Date(), '+05:45')).toThrow(RangeError);
  });
});

describe('instants and bucket labels on the reporting timezone wall clock', () => {
  it('formats instants with their offset, and in UTC', () => {
    expect(formatInstant('2026-03-09T18:15:00.000Z', 'Asia/Kathmandu')).toBe('2026-03-10 00:00 +05:45');
    expect(formatUtc('2026-03-09T18:15:00.000Z')).toBe('2026-03-09 18:15 UTC');
    expect(formatInstant('not a date', 'UTC')).toBe('not a date');
  });

  it('labels day buckets by local date and hour buckets by local hour', () => {
    expect(bucketLabel('2026-03-09T18:15:00Z', 'day', 'Asia/Kathmandu')).toBe('2026-03-10');
    expect(bucketLabel('2026-03-09T19:15:00Z', 'hour', 'Asia/Kathmandu')).toBe('2026-03-10 01:00');
  });
});
