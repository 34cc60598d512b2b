/**
 * A naive reference of a breakdown (DESIGN §9), independent of apps/reporting-projection: the
 * recommendations of one scope created in the period, each attributed to the ad or product of
 * the first `generated` event of it (in application order, agreeing with its first event) that
 * carries one, else to null; their five figures summed per id; rows sorted by a figure
 * descending, ties by id ascending (code units), the unattributed row after every id; ids whose
 * figures are all zero left out.
 */
import type { ModelScope } from './reference-model.js';

export type BreakdownModelEvent =
  | {
      type: 'recommendation';
      kind: 'generated' | 'shown' | 'mentioned' | 'clicked' | 'engaged' | 'converted';
      event_id: string;
      recommendation_id: string;
      agent_id: string;
      traffic: 'live' | 'test';
      recommendation_created_at: string;
      billable?: boolean;
      ad_id?: string;
      product_id?: string;
    }
  | { type: 'accounting'; entry_id: string; agent_id: string; traffic: 'live' | 'test'; recommendation_id: string | null; amount_micros: number; currency: string | null }
  | { type: 'reconciled'; event_id: string };

/** The stream payload of a model event (its accounting entry recorded at `recordedAt`, a lifecycle event occurring at its recommendation's creation). */
export function breakdownEventPayload(event: BreakdownModelEvent, recordedAt: Date): object {
  if (event.type === 'accounting') {
    const { type: _type, ...rest } = event;
    return { ...rest, recorded_at: recordedAt.toISOString() };
  }
  const { type: _type, kind: _kind, ...rest } = event as Extract<BreakdownModelEvent, { type: 'recommendation' }>;
  return { ...rest, occurred_at: rest.recommendation_created_at };
}

export interface ReferenceRow {
  id: string | null;
  exposures: number;
  clicks: number;
  engagements: number;
  conversions: number;
  earnings_micros: number;
}

const LEVEL = { generated: 0, shown: 1, mentioned: 1, clicked: 2, engaged: 3, converted: 4 } as const;
export const REFERENCE_FIGURES = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'] as const;

/** Every row of the scope's breakdown, in the order of `sort`. */
export function referenceBreakdown(
  events: BreakdownModelEvent[],
  scope: ModelScope,
  by: 'ad' | 'product',
  sort: 'exposures' | 'clicks' | 'conversions' | 'earnings_micros',
): ReferenceRow[] {
  const recs = new Map<string, { agent: string; traffic: string; created: number; level: number; ad: string | null; product: string | null }>();
  const seen = new Set<string>();
  const entries: Extract<BreakdownModelEvent, { type: 'accounting' }>[] = [];
  for (const event of events) {
    if (event.type === 'accounting') {
      if (!seen.has(`acc:${event.entry_id}`)) entries.push(event);
      seen.add(`acc:${event.entry_id}`);
      continue;
    }
    if (event.type !== 'recommendation') continue;
    let rec = recs.get(event.recommendation_id);
    const created = Date.parse(event.recommendation_created_at);
    if (!rec) {
      rec = { agent: event.agent_id, traffic: event.traffic, created, level: -1, ad: null, product: null };
      recs.set(event.recommendation_id, rec);
    } else if (rec.agent !== event.agent_id || rec.traffic !== event.traffic || rec.created !== created) continue;
    rec.level = Math.max(rec.level, LEVEL[event.kind]);
    if (event.kind === 'generated') {
      rec.ad ??= event.ad_id || null;
      rec.product ??= event.product_id || null;
    }
  }
  const perId = new Map<string | null, ReferenceRow>();
  for (const [id, rec] of recs) {
    if (rec.agent !== scope.agent_id || rec.traffic !== scope.traffic) continue;
    const minute = Math.floor(rec.created / 60_000) * 60_000;
    if ((scope.start !== null && minute < scope.start.getTime()) || minute >= scope.end.getTime()) continue;
    const own = entries.filter((e) => e.recommendation_id === id && e.agent_id === rec.agent && e.traffic === rec.traffic);
    const key = by === 'ad' ? rec.ad : rec.product;
    const row = perId.get(key) ?? { id: key, exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 };
    perId.set(key, row);
    if (rec.level >= 1) row.exposures += 1;
    if (rec.level >= 2) row.clicks += 1;
    if (rec.level === 3) row.engagements += 1;
    if (rec.level === 4) row.conversions += 1;
    if (!own.some((e) => e.currency !== 'USD')) row.earnings_micros += own.reduce((sum, e) => sum + e.amount_micros, 0);
  }
  const rows = [...perId.values()].filter((row) => REFERENCE_FIGURES.some((name) => row[name] !== 0));
  return rows.sort((a, b) => {
    if (a[sort] !== b[sort]) return b[sort] - a[sort];
    if (a.id === null) return 1;
    if (b.id === null) return -1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}
