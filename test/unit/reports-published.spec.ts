import { decodeReportsPublished, encodeReportsPublished } from '#libs/contracts';
import { reportScopeKey } from '../../apps/reporting-projection/src/publication/snapshot.js';
import { seriesScopeKey } from '../../apps/reporting-projection/src/publication/series-snapshot.js';
import { PublishedCache } from '../../apps/reporting-projection/src/reports/published-cache.js';

const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('reporting.v1.published payload', () => {
  it('announces a cycle with an empty body and a preparation with its scope', () => {
    expect(encodeReportsPublished()).toHaveLength(0);
    const scope = { agent_id: 'agent_a', traffic: 'test', time_range: '90d' } as const;
    expect(JSON.parse(text(encodeReportsPublished(scope)))).toEqual(scope);
    expect(decodeReportsPublished(encodeReportsPublished(scope))).toEqual(scope);
  });

  it.each([
    ['an empty body (a cycle)', ''],
    ['not JSON', '{nope'],
    ['null', 'null'],
    ['no agent', '{"traffic":"live","time_range":"7d"}'],
    ['an unknown traffic', '{"agent_id":"a","traffic":"prod","time_range":"7d"}'],
    ['an unknown range', '{"agent_id":"a","traffic":"live","time_range":"8d"}'],
  ])('reads %s as "everything changed"', (_what, body) => {
    expect(decodeReportsPublished(new TextEncoder().encode(body))).toBeNull();
  });
});

describe('PublishedCache.forgetScope', () => {
  const a7 = { agentId: 'agent_a', traffic: 'live', timeRange: '7d' } as const;
  const keys = {
    report: reportScopeKey(a7),
    dailySeries: seriesScopeKey({ ...a7, granularity: 'day' }),
    hourlySeries: seriesScopeKey({ ...a7, granularity: 'hour' }),
    otherTraffic: reportScopeKey({ ...a7, traffic: 'test' }),
    otherRange: reportScopeKey({ ...a7, timeRange: '1d' }),
    // An agent whose id extends agent_a's must not be caught by a prefix match.
    longerAgent: reportScopeKey({ ...a7, agentId: 'agent_ab' }),
  };

  async function filled(): Promise<PublishedCache<string>> {
    const cache = new PublishedCache<string>(100);
    for (const [name, key] of Object.entries(keys)) await cache.get(key, async () => name);
    return cache;
  }

  it("drops the scope's report and its series, nothing else", async () => {
    const cache = await filled();
    cache.forgetScope(keys.report);
    const reloaded: string[] = [];
    for (const [name, key] of Object.entries(keys)) await cache.get(key, async () => (reloaded.push(name), name));
    expect(reloaded.sort()).toEqual(['dailySeries', 'hourlySeries', 'report']);
  });

  it('does not keep a load that was in flight across it', async () => {
    const cache = new PublishedCache<string>(100);
    let release!: (value: string) => void;
    const loading = cache.get(keys.otherRange, () => new Promise<string>((resolve) => (release = resolve)));
    cache.forgetScope(keys.report);
    release('old');
    expect(await loading).toBe('old');
    expect(await cache.get(keys.otherRange, async () => 'new')).toBe('new');
  });

  it('forget() drops everything', async () => {
    const cache = await filled();
    cache.forget();
    const reloaded: string[] = [];
    for (const [name, key] of Object.entries(keys)) await cache.get(key, async () => (reloaded.push(name), name));
    expect(reloaded).toHaveLength(Object.keys(keys).length);
  });
});
