import 'reflect-metadata';
import { ConfigError, loadEnv } from '#libs/config';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';

describe('ReportingProjectionEnv: HEAP_GROWING_PERCENT (issue 15, memory)', () => {
  it('lets the old generation grow 20 % past the live heap by default, 0 leaving V8 its own factor', () => {
    expect(loadEnv(ReportingProjectionEnv, {}).HEAP_GROWING_PERCENT).toBe(20);
    expect(loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: '0' }).HEAP_GROWING_PERCENT).toBe(0);
    expect(loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: '50' }).HEAP_GROWING_PERCENT).toBe(50);
  });

  it.each(['-1', '12.5', '401', 'lots'])('refuses HEAP_GROWING_PERCENT=%s', (value) => {
    let thrown: unknown;
    try {
      loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const problems = (thrown as ConfigError).problems;
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem).toMatch(/^HEAP_GROWING_PERCENT: /);
  });
});
