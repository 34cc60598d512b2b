import { RollupDeltas } from '../../apps/reporting-projection/src/ingestion/rollup-deltas.js';
import { zeroCounters, type Counters } from '../../apps/reporting-projection/src/rules/counting.js';

const counters = (values: Partial<Counters>): Counters => ({ ...zeroCounters(), ...values });
const at = (iso: string) => Date.parse(iso);

describe('RollupDeltas', () => {
  it('keeps one row per minute, and sums the hours and days from them, sorted by (agent, traffic, bucket)', () => {
    const deltas = new RollupDeltas();
    deltas.add('agent_b', 'live', at('2026-03-02T10:15:20Z'), counters({ exposures: 1 }));
    deltas.add('agent_a', 'live', at('2026-03-02T10:15:40Z'), counters({ exposures: 1 }));
    deltas.add('agent_a', 'live', at('2026-03-02T10:15:59Z'), counters({ clicks: 1 }));
    deltas.add('agent_a', 'live', at('2026-03-02T10:45:00Z'), counters({ exposures: 2 }));
    deltas.add('agent_a', 'live', at('2026-03-02T23:59:59Z'), counters({ conversions: 1 }));
    expect(deltas.sorted('minute').map((r) => [r.agentId, new Date(r.bucketMs).toISOString(), r.counters])).toEqual([
      ['agent_a', '2026-03-02T10:15:00.000Z', counters({ exposures: 1, clicks: 1 })],
      ['agent_a', '2026-03-02T10:45:00.000Z', counters({ exposures: 2 })],
      ['agent_a', '2026-03-02T23:59:00.000Z', counters({ conversions: 1 })],
      ['agent_b', '2026-03-02T10:15:00.000Z', counters({ exposures: 1 })],
    ]);
    expect(deltas.sorted('hour').map((r) => [r.agentId, new Date(r.bucketMs).toISOString(), r.counters])).toEqual([
      ['agent_a', '2026-03-02T10:00:00.000Z', counters({ exposures: 3, clicks: 1 })],
      ['agent_a', '2026-03-02T23:00:00.000Z', counters({ conversions: 1 })],
      ['agent_b', '2026-03-02T10:00:00.000Z', counters({ exposures: 1 })],
    ]);
    expect(deltas.sorted('day').map((r) => [r.agentId, new Date(r.bucketMs).toISOString(), r.counters])).toEqual([
      ['agent_a', '2026-03-02T00:00:00.000Z', counters({ exposures: 3, clicks: 1, conversions: 1 })],
      ['agent_b', '2026-03-02T00:00:00.000Z', counters({ exposures: 1 })],
    ]);
  });

  it('skips a coarser row whose minutes cancel out', () => {
    const deltas = new RollupDeltas();
    deltas.add('agent_a', 'live', at('2026-03-02T08:00:05Z'), counters({ accounting_review_required: 1 }));
    deltas.add('agent_a', 'live', at('2026-03-02T08:30:05Z'), counters({ accounting_review_required: -1 }));
    expect(deltas.sorted('minute')).toHaveLength(2);
    expect(deltas.sorted('hour')).toEqual([]);
    expect(deltas.sorted('day')).toEqual([]);
  });
});
