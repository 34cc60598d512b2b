import { coarsenedParts, QUARTER_MS } from '../../apps/reporting-projection/src/publication/coarsened-rollups.js';
import 'reflect-metadata';
import type { DataSource } from 'typeorm';
import { ConfigError, loadEnv } from '#libs/config';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { STATE_EDGE_DAYS, StoragePartitions } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { prng } from '../support/prng.js';

const MINUTE = 60_000;

/**
 * coarsenedParts: for any minute range and bound, the quarter rows it names (whole quarters
 * before the bound) plus its signed state segments cover each minute of the range before the
 * bound exactly once and no other minute, and never more than 7 minutes of state per edge.
 */
describe('coarsenedParts', () => {
  it('covers exactly the minutes of the range before the bound, with at most 7 minutes of state at each edge', () => {
    const next = prng(15);
    const base = Date.parse('2031-03-02T00:00:00Z');
    for (let run = 0; run < 1000; run++) {
      const from = base + Math.floor(next() * 600) * MINUTE;
      const to = from + Math.floor(next() * 200) * MINUTE;
      const bound = run % 7 === 0 ? Number.NEGATIVE_INFINITY : base + Math.floor(next() * 60) * 15 * MINUTE;
      const parts = coarsenedParts(from, to, bound);
      const count = new Map<number, number>();
      const add = (a: number, b: number, sign: number) => {
        for (let t = a; t < b; t += MINUTE) count.set(t, (count.get(t) ?? 0) + sign);
      };
      for (const q of parts.quarters) {
        expect(q.from % QUARTER_MS).toBe(0);
        expect(q.to % QUARTER_MS).toBe(0);
        expect(q.to).toBeLessThanOrEqual(Math.max(bound, from));
        add(q.from, q.to, 1);
      }
      for (const s of parts.state) {
        expect(s.to - s.from).toBeLessThanOrEqual(7 * MINUTE);
        expect(s.to).toBeLessThanOrEqual(bound);
        add(s.from, s.to, s.sign);
      }
      const expected = new Map<number, number>();
      for (let t = from; t < Math.min(to, bound); t += MINUTE) expected.set(t, 1);
      const actual = new Map([...count].filter(([, n]) => n !== 0));
      expect([...actual].sort((x, y) => x[0] - y[0])).toEqual([...expected].sort((x, y) => x[0] - y[0]));
      expect(parts.state.length).toBeLessThanOrEqual(2);
    }
  });

  it('reads nothing coarsened when nothing is before the bound', () => {
    expect(coarsenedParts(0, 60 * MINUTE, Number.NEGATIVE_INFINITY)).toEqual({ quarters: [], state: [] });
    expect(coarsenedParts(QUARTER_MS, 2 * QUARTER_MS, QUARTER_MS)).toEqual({ quarters: [], state: [] });
  });
});

describe('REPORTING_MINUTE_ROLLUPS_DAYS', () => {
  it('is 35 days by default, an integer of at least 31', () => {
    expect(loadEnv(ReportingProjectionEnv, {}).REPORTING_MINUTE_ROLLUPS_DAYS).toBe(35);
    expect(loadEnv(ReportingProjectionEnv, { REPORTING_MINUTE_ROLLUPS_DAYS: '31' }).REPORTING_MINUTE_ROLLUPS_DAYS).toBe(31);
    for (const value of ['30', '0', '35.5', 'month', '3651']) {
      expect(() => loadEnv(ReportingProjectionEnv, { REPORTING_MINUTE_ROLLUPS_DAYS: value })).toThrow(ConfigError);
    }
  });

  it('keeps minutes as set while the state reaches back past the 90d start, and at least 91 days otherwise', () => {
    const window = (restatement: number, minutes: number) => new StoragePartitions(null as unknown as DataSource, Date.now, restatement, minutes).minuteWindowDays;
    expect(STATE_EDGE_DAYS).toBe(91);
    expect(window(120, 35)).toBe(35);
    expect(window(91, 31)).toBe(31);
    expect(window(200, 150)).toBe(150);
    expect(window(35, 35)).toBe(91);
    expect(window(90, 100)).toBe(100);
  });
});
