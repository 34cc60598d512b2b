import { earningsCoverage, platformWatermark, reportStatus } from '../../apps/reporting-projection/src/rules/coverage.js';

const at = (iso: string) => new Date(iso);
const end = at('2024-11-03T15:42:00Z');

describe('earningsCoverage', () => {
  const settled = { end, pendingRecommendations: 0, reviewRequired: 0 };

  it('is unavailable while no reconciliation watermark is known, whatever else holds', () => {
    expect(earningsCoverage({ ...settled, reconciledThrough: null })).toBe('unavailable');
    expect(earningsCoverage({ reconciledThrough: null, end, pendingRecommendations: 3, reviewRequired: 2 })).toBe('unavailable');
  });

  it('is complete when the watermark reaches the end exactly and nothing is open', () => {
    expect(earningsCoverage({ ...settled, reconciledThrough: at('2024-11-03T15:42:00Z') })).toBe('complete');
    expect(earningsCoverage({ ...settled, reconciledThrough: at('2024-12-01T00:00:00Z') })).toBe('complete');
  });

  it('is partial while the watermark is behind the end, even by a millisecond', () => {
    expect(earningsCoverage({ ...settled, reconciledThrough: at('2024-11-03T15:41:59.999Z') })).toBe('partial');
    expect(earningsCoverage({ ...settled, reconciledThrough: at('2020-01-01T00:00:00Z') })).toBe('partial');
  });

  it('is partial while recommendations await accounting or entries need review', () => {
    const reconciledThrough = at('2024-12-01T00:00:00Z');
    expect(earningsCoverage({ ...settled, reconciledThrough, pendingRecommendations: 1 })).toBe('partial');
    expect(earningsCoverage({ ...settled, reconciledThrough, reviewRequired: 1 })).toBe('partial');
    expect(earningsCoverage({ reconciledThrough, end, pendingRecommendations: 2, reviewRequired: 5 })).toBe('partial');
  });
});

describe('reportStatus', () => {
  const processedThrough = at('2024-11-03T15:42:00Z');
  const staleAfterMs = 120_000;

  it('is ready up to and including exactly staleAfterMs behind', () => {
    expect(reportStatus(processedThrough, processedThrough, staleAfterMs)).toBe('ready');
    expect(reportStatus(processedThrough, at('2024-11-03T15:43:30Z'), staleAfterMs)).toBe('ready');
    expect(reportStatus(processedThrough, at('2024-11-03T15:44:00Z'), staleAfterMs)).toBe('ready');
  });

  it('is stale once more than staleAfterMs behind', () => {
    expect(reportStatus(processedThrough, at('2024-11-03T15:44:00.001Z'), staleAfterMs)).toBe('stale');
    expect(reportStatus(processedThrough, at('2024-11-04T00:00:00Z'), staleAfterMs)).toBe('stale');
  });

  it('is ready when the clock is behind the cutoff', () => {
    expect(reportStatus(processedThrough, at('2024-11-03T15:41:00Z'), staleAfterMs)).toBe('ready');
  });
});

describe('platformWatermark', () => {
  const early = at('2024-11-01T00:00:00Z');
  const late = at('2024-11-02T00:00:00Z');

  it('is the later of the global and the platform’s own watermark', () => {
    expect(platformWatermark(early, late)).toEqual(late);
    expect(platformWatermark(late, early)).toEqual(late);
    expect(platformWatermark(late, new Date(late.getTime()))).toEqual(late);
  });

  it('uses whichever is known, and null when neither is', () => {
    expect(platformWatermark(null, early)).toEqual(early);
    expect(platformWatermark(early, null)).toEqual(early);
    expect(platformWatermark(null, null)).toBeNull();
  });
});
