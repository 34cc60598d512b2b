import { BreakdownDeltas, type BreakdownFigures } from '../../apps/reporting-projection/src/ingestion/breakdown-deltas.js';
import { Level } from '../../apps/reporting-projection/src/rules/counting.js';

const HOUR = 3_600_000;
const figures = (exposures: number, clicks = 0): BreakdownFigures => ({ exposures, clicks, engagements: 0, conversions: 0, earnings_micros: 0 });
const state = (adId: string | null, productId: string | null, createdAtMs = 10 * HOUR + 5, agentId: string | null = 'agent_a') => ({
  agentId,
  traffic: agentId === null ? null : 'live',
  createdAtMs: agentId === null ? null : createdAtMs,
  adId,
  productId,
  level: Level.shown,
  billable: false,
  attributedEntries: 0,
  attributedUsdMicros: 0,
  foreignCurrencyEntries: 0,
});
const rows = (deltas: BreakdownDeltas) => deltas.sorted().map((r) => [r.agentId, r.bucketMs / HOUR, r.adId, r.productId, r.figures.exposures, r.figures.clicks]);

describe('BreakdownDeltas: one row per (ad, product) pair', () => {
  it('writes one row for a recommendation whose attribution does not change, in the hour of its creation', () => {
    const deltas = new BreakdownDeltas();
    deltas.move(state('ad_1', 'prod_x'), state('ad_1', 'prod_x'), figures(1), figures(1, 1));
    deltas.move(state(null, null, 0, null), state(null, 'prod_y'), null, figures(1));
    expect(rows(deltas)).toEqual([
      ['agent_a', 10, '', 'prod_y', 1, 0],
      ['agent_a', 10, 'ad_1', 'prod_x', 0, 1],
    ]);
  });

  it('moves the whole contribution from the previous pair to the new one when a late generated attributes it', () => {
    const deltas = new BreakdownDeltas();
    deltas.move(state(null, null), state('ad_1', null), figures(1, 1), figures(1, 1));
    deltas.move(state(null, 'prod_x'), state('ad_2', 'prod_x'), figures(1), figures(1, 1));
    expect(rows(deltas)).toEqual([
      ['agent_a', 10, '', '', -1, -1],
      ['agent_a', 10, '', 'prod_x', -1, 0],
      ['agent_a', 10, 'ad_1', '', 1, 1],
      ['agent_a', 10, 'ad_2', 'prod_x', 1, 1],
    ]);
  });

  it('leaves out rows whose deltas sum to zero and sorts by the primary key (code units), the lock order', () => {
    const deltas = new BreakdownDeltas();
    deltas.move(state('ad_1', 'p'), state('ad_1', 'p'), figures(1), figures(1));
    deltas.move(state('b', 'p', 11 * HOUR), state('b', 'p', 11 * HOUR), null, figures(1));
    deltas.move(state('B', 'p', 11 * HOUR), state('B', 'p', 11 * HOUR), null, figures(1));
    deltas.move(state('a', 'q', 11 * HOUR, 'agent_0'), state('a', 'q', 11 * HOUR, 'agent_0'), null, figures(1));
    expect(rows(deltas).map((r) => r.slice(0, 4))).toEqual([
      ['agent_0', 11, 'a', 'q'],
      ['agent_a', 11, 'B', 'p'],
      ['agent_a', 11, 'b', 'p'],
    ]);
  });
});
