/**
 * An independent, deliberately naive reference model of the report counters, re-derived from
 * SPEC "Counting rules" and DESIGN §4/§5. It replays a whole event stream in memory for one
 * scope and shares no code with apps/reporting-projection, so a property test can compare the
 * projection against it.
 */

export type ModelEvent =
  | {
      type: 'recommendation';
      kind: 'generated' | 'shown' | 'mentioned' | 'clicked' | 'engaged' | 'converted';
      event_id: string;
      recommendation_id: string;
      agent_id: string;
      traffic: 'live' | 'test';
      recommendation_created_at: string;
      occurred_at: string;
      billable?: boolean;
    }
  | {
      type: 'accounting';
      entry_id: string;
      agent_id: string;
      traffic: 'live' | 'test';
      recommendation_id: string | null;
      amount_micros: number;
      currency: string | null;
      recorded_at: string;
    }
  | { type: 'reconciled'; event_id: string; traffic: 'live' | 'test'; reconciled_through: string; agent_id?: string };

export interface ModelCounters {
  exposures: number;
  clicks: number;
  engagements: number;
  conversions: number;
  earnings_micros: number;
  earnings_excluded_recommendations: number;
  pending_earnings_recommendations: number;
  accounting_review_required: number;
}

export interface ModelScope {
  agent_id: string;
  traffic: 'live' | 'test';
  start: Date | null;
  end: Date;
}

type RecommendationEvent = Extract<ModelEvent, { type: 'recommendation' }>;
type AccountingEvent = Extract<ModelEvent, { type: 'accounting' }>;
type ReconciledEvent = Extract<ModelEvent, { type: 'reconciled' }>;

const LEVEL: Record<RecommendationEvent['kind'], number> = {
  generated: 0,
  shown: 1,
  mentioned: 1,
  clicked: 2,
  engaged: 3,
  converted: 4,
};

interface KnownRecommendation {
  agent_id: string;
  traffic: 'live' | 'test';
  created_at: string;
  level: number;
  billable: boolean;
}

function minuteOf(timestamp: string): number {
  const ms = Date.parse(timestamp);
  return Math.floor(ms / 60_000) * 60_000;
}

function inPeriod(timestamp: string, scope: ModelScope): boolean {
  const minute = minuteOf(timestamp);
  if (scope.start !== null && minute < scope.start.getTime()) return false;
  return minute < scope.end.getTime();
}

/** Every counter of a report at zero. */
export function zeroCounters(): ModelCounters {
  return {
    exposures: 0,
    clicks: 0,
    engagements: 0,
    conversions: 0,
    earnings_micros: 0,
    earnings_excluded_recommendations: 0,
    pending_earnings_recommendations: 0,
    accounting_review_required: 0,
  };
}

export function referenceReport(
  events: ModelEvent[],
  scope: ModelScope,
): ModelCounters & { reconciled_through: Date | null } {
  // 1. Drop duplicates: the first event with a given event_id / entry_id wins.
  const seenEventIds = new Set<string>();
  const seenEntryIds = new Set<string>();
  const lifecycle: RecommendationEvent[] = [];
  const accounting: AccountingEvent[] = [];
  const reconciled: ReconciledEvent[] = [];
  for (const event of events) {
    if (event.type === 'accounting') {
      if (seenEntryIds.has(event.entry_id)) continue;
      seenEntryIds.add(event.entry_id);
      accounting.push(event);
    } else {
      if (seenEventIds.has(event.event_id)) continue;
      seenEventIds.add(event.event_id);
      if (event.type === 'recommendation') lifecycle.push(event);
      else reconciled.push(event);
    }
  }

  // 2. Recommendations: the first lifecycle event fixes agent, traffic and created_at; later
  //    events that disagree are dead-lettered and ignored.
  const recommendations = new Map<string, KnownRecommendation>();
  for (const event of lifecycle) {
    const known = recommendations.get(event.recommendation_id);
    if (known === undefined) {
      recommendations.set(event.recommendation_id, {
        agent_id: event.agent_id,
        traffic: event.traffic,
        created_at: event.recommendation_created_at,
        level: LEVEL[event.kind],
        billable: event.billable === true,
      });
      continue;
    }
    const agrees =
      known.agent_id === event.agent_id &&
      known.traffic === event.traffic &&
      Date.parse(known.created_at) === Date.parse(event.recommendation_created_at);
    if (!agrees) continue;
    known.level = Math.max(known.level, LEVEL[event.kind]);
    known.billable = known.billable || event.billable === true;
  }

  // 3. Accounting entries: attributed to a known recommendation of the same agent and traffic.
  const attributedTo = new Map<string, AccountingEvent[]>();
  const unattributed: AccountingEvent[] = [];
  for (const entry of accounting) {
    const recommendation = entry.recommendation_id === null ? undefined : recommendations.get(entry.recommendation_id);
    const attributed =
      recommendation !== undefined &&
      recommendation.agent_id === entry.agent_id &&
      recommendation.traffic === entry.traffic;
    if (attributed && entry.recommendation_id !== null) {
      const list = attributedTo.get(entry.recommendation_id) ?? [];
      list.push(entry);
      attributedTo.set(entry.recommendation_id, list);
    } else {
      unattributed.push(entry);
    }
  }

  // 4. Count the recommendations of the scope created in the period.
  const counters = zeroCounters();
  for (const [id, recommendation] of recommendations) {
    if (recommendation.agent_id !== scope.agent_id || recommendation.traffic !== scope.traffic) continue;
    if (!inPeriod(recommendation.created_at, scope)) continue;
    if (recommendation.level >= 1) counters.exposures += 1;
    if (recommendation.level >= 2) counters.clicks += 1;
    if (recommendation.level === 3) counters.engagements += 1;
    if (recommendation.level === 4) counters.conversions += 1;
    const entries = attributedTo.get(id) ?? [];
    if (entries.some((entry) => entry.currency !== 'USD')) {
      counters.earnings_excluded_recommendations += 1;
    } else {
      for (const entry of entries) counters.earnings_micros += entry.amount_micros;
    }
    if (recommendation.billable && entries.length === 0) counters.pending_earnings_recommendations += 1;
  }

  // 5. Entries that cannot be attributed, in the period holding their recorded_at.
  for (const entry of unattributed) {
    if (entry.agent_id !== scope.agent_id || entry.traffic !== scope.traffic) continue;
    if (inPeriod(entry.recorded_at, scope)) counters.accounting_review_required += 1;
  }

  // 6. Watermark: the latest global or own reconciliation of the scope's traffic.
  let watermark: number | null = null;
  for (const event of reconciled) {
    if (event.traffic !== scope.traffic) continue;
    if (event.agent_id !== undefined && event.agent_id !== null && event.agent_id !== scope.agent_id) continue;
    const through = Date.parse(event.reconciled_through);
    if (watermark === null || through > watermark) watermark = through;
  }

  return { ...counters, reconciled_through: watermark === null ? null : new Date(watermark) };
}
