import 'reflect-metadata';
import { ConfigError, loadEnv } from '#libs/config';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';

function problems(source: Record<string, string>): string[] {
  try {
    loadEnv(ReportingProjectionEnv, source);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('ReportingProjectionEnv: HEAP_GROWING_PERCENT (issue 15, memory)', () => {
  it('lets the old generation grow 20 % past the live heap by default, 0 leaving V8 its own factor', () => {
    expect(loadEnv(ReportingProjectionEnv, {}).HEAP_GROWING_PERCENT).toBe(20);
    expect(loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: '0' }).HEAP_GROWING_PERCENT).toBe(0);
    expect(loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: '50' }).HEAP_GROWING_PERCENT).toBe(50);
  });

  it('refuses a negative, fractional or unbounded percent', () => {
    for (const value of ['-1', '12.5', '401', 'lots']) expect(problems({ HEAP_GROWING_PERCENT: value }).join('\n')).toMatch(/^HEAP_GROWING_PERCENT: /m);
  });
});
