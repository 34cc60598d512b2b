import { REPORT_COUNTERS, type RecommendationEventKind, type ReportCounters } from '#libs/contracts';

/**
 * Engagement levels of a recommendation (DESIGN §4): the highest kind seen wins.
 * UNKNOWN marks a row that so far only holds accounting entries that arrived first.
 */
export const Level = {
  unknown: -1,
  generated: 0,
  shown: 1,
  clicked: 2,
  engaged: 3,
  converted: 4,
} as const;

const LEVEL_OF_KIND: Record<RecommendationEventKind, number> = {
  generated: Level.generated,
  shown: Level.shown,
  mentioned: Level.shown,
  clicked: Level.clicked,
  engaged: Level.engaged,
  converted: Level.converted,
};

export function levelOfKind(kind: RecommendationEventKind): number {
  return LEVEL_OF_KIND[kind];
}

/** Every counter of a Report, as summed from rollups. */
export type Counters = ReportCounters;

export const COUNTER_NAMES: readonly (keyof Counters)[] = REPORT_COUNTERS;

export function zeroCounters(): Counters {
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

/** What the projection knows of one recommendation that decides its place in the counters. */
export interface RecommendationFacts {
  level: number;
  billable: boolean;
  attributedEntries: number;
  attributedUsdMicros: number;
  /** Attributed entries whose currency is not USD or is unresolved (null). */
  foreignCurrencyEntries: number;
}

/**
 * The contribution of one recommendation to the counters of its creation minute.
 * - Counted once, at its highest level (SPEC counting rules 2–3): shown/mentioned and above
 *   are exposures; clicked, engaged and converted are clicks; engaged and converted are
 *   exclusive of each other. Generated only counts nowhere.
 * - Earnings (DESIGN §5): the sum of its attributed entries when all are USD; otherwise it is
 *   excluded whole and counted once in earnings_excluded_recommendations.
 * - Pending: a billable event and no attributed entry yet.
 */
export function contributionOf(facts: RecommendationFacts): Counters {
  const counters = zeroCounters();
  if (facts.level === Level.unknown) return counters;
  counters.exposures = facts.level >= Level.shown ? 1 : 0;
  counters.clicks = facts.level >= Level.clicked ? 1 : 0;
  counters.engagements = facts.level === Level.engaged ? 1 : 0;
  counters.conversions = facts.level === Level.converted ? 1 : 0;
  if (facts.foreignCurrencyEntries > 0) counters.earnings_excluded_recommendations = 1;
  else counters.earnings_micros = facts.attributedUsdMicros;
  counters.pending_earnings_recommendations = facts.billable && facts.attributedEntries === 0 ? 1 : 0;
  return counters;
}

/** Field by field rather than over COUNTER_NAMES: on the ingest hot path, keyed access by a variable name was a few % of the CPU. */
export function addCounters(target: Counters, delta: Counters, sign: 1 | -1 = 1): Counters {
  target.exposures += sign * delta.exposures;
  target.clicks += sign * delta.clicks;
  target.engagements += sign * delta.engagements;
  target.conversions += sign * delta.conversions;
  target.earnings_micros += sign * delta.earnings_micros;
  target.earnings_excluded_recommendations += sign * delta.earnings_excluded_recommendations;
  target.pending_earnings_recommendations += sign * delta.pending_earnings_recommendations;
  target.accounting_review_required += sign * delta.accounting_review_required;
  return target;
}

export function difference(after: Counters, before: Counters): Counters {
  return addCounters(addCounters(zeroCounters(), after), before, -1);
}

export function isZero(c: Counters): boolean {
  return (
    c.exposures === 0 &&
    c.clicks === 0 &&
    c.engagements === 0 &&
    c.conversions === 0 &&
    c.earnings_micros === 0 &&
    c.earnings_excluded_recommendations === 0 &&
    c.pending_earnings_recommendations === 0 &&
    c.accounting_review_required === 0
  );
}
