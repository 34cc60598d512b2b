import { formatRoute, parseRoute } from '../../apps/dashboard/src/routing/routes.js';

describe('dashboard route of the top ads and products', () => {
  it('reads and writes #/reporting/top with its traffic and range, defaulting to live and 30d', () => {
    expect(parseRoute('#/reporting/top?traffic=test&range=7d')).toEqual({ page: 'top', traffic: 'test', range: '7d' });
    expect(parseRoute('#/reporting/top')).toEqual({ page: 'top', traffic: 'live', range: '30d' });
    expect(parseRoute('#/reporting/top?range=2w&traffic=prod')).toEqual({ page: 'top', traffic: 'live', range: '30d' });
    expect(formatRoute({ page: 'top', traffic: 'test', range: 'all' })).toBe('#/reporting/top?traffic=test&range=all');
    expect(parseRoute(formatRoute({ page: 'top', traffic: 'live', range: 'today' }))).toEqual({ page: 'top', traffic: 'live', range: 'today' });
    expect(parseRoute('#/reporting/top/more').page).toBe('not-found');
  });
});
