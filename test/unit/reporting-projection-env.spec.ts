import 'reflect-metadata';
import { ConfigError, loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { PayoutsReadEnv } from '../../apps/payouts-read/src/config/payouts-read.env.js';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';

describe('HEAP_GROWING_PERCENT (issue 15, memory)', () => {
  it('lets the old generation grow 20 % past the live heap by default, 0 leaving V8 its own factor', () => {
    expect(loadEnv(ReportingProjectionEnv, {}).HEAP_GROWING_PERCENT).toBe(20);
    expect(loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: '0' }).HEAP_GROWING_PERCENT).toBe(0);
    expect(loadEnv(ReportingProjectionEnv, { HEAP_GROWING_PERCENT: '50' }).HEAP_GROWING_PERCENT).toBe(50);
  });

  it('is a setting of every service (ServiceEnv, applied by runService), 20 % by default everywhere', () => {
    expect(loadEnv(GatewayEnv, {}).HEAP_GROWING_PERCENT).toBe(20);
    expect(loadEnv(PayoutsReadEnv, {}).HEAP_GROWING_PERCENT).toBe(20);
    expect(loadEnv(GatewayEnv, { HEAP_GROWING_PERCENT: '0' }).HEAP_GROWING_PERCENT).toBe(0);
    expect(() => loadEnv(GatewayEnv, { HEAP_GROWING_PERCENT: '401' })).toThrow(ConfigError);
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
