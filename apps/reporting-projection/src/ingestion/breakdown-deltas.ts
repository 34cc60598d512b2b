import type { RecommendationEventDto } from '#libs/contracts';
import { Level, type RecommendationFacts } from '../rules/counting.js';
import { arrayLiteral, textArrayLiteral } from '#libs/database';

/** The stored id of "unattributed" (a primary-key column cannot be null); served as null. */
export const UNATTRIBUTED = '';

/** Breakdown rollups are kept per hour of creation; the parts of a period that do not fill an hour come from the per-recommendation state. */
export const BREAKDOWN_BUCKET_MS = 3_600_000;

/** The ad and product of a recommendation: those of its `generated` event, null until one carries them. */
export interface Attribution {
  adId?: string | null;
  productId?: string | null;
}

/** The five figures of a breakdown row. */
export interface BreakdownFigures {
  exposures: number;
  clicks: number;
  engagements: number;
  conversions: number;
  earnings_micros: number;
}

export const BREAKDOWN_FIGURES: readonly (keyof BreakdownFigures)[] = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'];

/**
 * A `generated` event attributes its recommendation (DESIGN §9): each of ad and product is set by
 * the first `generated` event that carries it (a non-empty id), and never changed afterwards.
 * Other kinds never attribute, whatever they carry.
 */
export function attributeGenerated(state: Attribution, event: RecommendationEventDto, level: number): void {
  if (level !== Level.generated) return;
  if (!state.adId && event.ad_id) state.adId = event.ad_id;
  if (!state.productId && event.product_id) state.productId = event.product_id;
}

export function sameAttribution(a: Attribution, b: Attribution): boolean {
  return (a.adId ?? null) === (b.adId ?? null) && (a.productId ?? null) === (b.productId ?? null);
}

const attributed = (id: string | null | undefined): string => id || UNATTRIBUTED;

/** One row of the breakdown rollup: a recommendation's figures under its (ad, product) pair; '' for either unattributed. */
export interface BreakdownRow {
  agentId: string;
  traffic: string;
  bucketMs: number;
  adId: string;
  productId: string;
  figures: BreakdownFigures;
}

type Known = RecommendationFacts & Attribution & { agentId: string | null; traffic: string | null; createdAtMs: number | null };

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The breakdown rollup deltas of a batch, per (agent, traffic, hour, ad, product): a changed
 * recommendation takes its previous contribution out of the row of its previous (ad, product) pair
 * and puts its new one into the row of its new pair. So a level change moves figures within one
 * row, and a late `generated` moves the whole contribution from ('', '') (or (ad, '')…) to its
 * attributed pair, in the same transaction as the rest of the batch. The ad breakdown sums these
 * rows per ad, the product breakdown the same rows per product: one row per changed
 * recommendation instead of one per dimension.
 */
export class BreakdownDeltas {
  private readonly rows = new Map<string, BreakdownRow>();

  /**
   * `before`: the recommendation as stored before the batch (agentId null: it was not known);
   * `was` and `now`: the contributions (contributionOf) of `before` (null when it was not known)
   * and of `after`, which the caller computes once for the rollups and the breakdowns.
   */
  move(before: Known, after: Known, was: BreakdownFigures | null, now: BreakdownFigures): void {
    if (after.agentId === null || after.traffic === null || after.createdAtMs === null) return;
    const bucketMs = Math.floor(after.createdAtMs / BREAKDOWN_BUCKET_MS) * BREAKDOWN_BUCKET_MS;
    const adId = attributed(after.adId);
    const productId = attributed(after.productId);
    if (was && (attributed(before.adId) !== adId || attributed(before.productId) !== productId)) {
      this.add(after.agentId, after.traffic, bucketMs, attributed(before.adId), attributed(before.productId), null, was);
      this.add(after.agentId, after.traffic, bucketMs, adId, productId, now, null);
    } else {
      // The same row before and after: one lookup, the difference added.
      this.add(after.agentId, after.traffic, bucketMs, adId, productId, now, was);
    }
  }

  private add(agentId: string, traffic: string, bucketMs: number, adId: string, productId: string, plus: BreakdownFigures | null, minus: BreakdownFigures | null): void {
    const key = `${agentId}\u0000${traffic}\u0000${bucketMs}\u0000${adId}\u0000${productId}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { agentId, traffic, bucketMs, adId, productId, figures: { exposures: 0, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 } };
      this.rows.set(key, row);
    }
    const figures = row.figures;
    if (plus) {
      figures.exposures += plus.exposures;
      figures.clicks += plus.clicks;
      figures.engagements += plus.engagements;
      figures.conversions += plus.conversions;
      figures.earnings_micros += plus.earnings_micros;
    }
    if (minus) {
      figures.exposures -= minus.exposures;
      figures.clicks -= minus.clicks;
      figures.engagements -= minus.engagements;
      figures.conversions -= minus.conversions;
      figures.earnings_micros -= minus.earnings_micros;
    }
  }

  /** Non-zero rows sorted by the primary key (agent, traffic, bucket, ad, product): the lock order. */
  sorted(): BreakdownRow[] {
    return [...this.rows.values()]
      .filter((row) => BREAKDOWN_FIGURES.some((name) => row.figures[name] !== 0))
      .sort(
        (a, b) =>
          byCodeUnit(a.agentId, b.agentId) ||
          byCodeUnit(a.traffic, b.traffic) ||
          a.bucketMs - b.bucketMs ||
          byCodeUnit(a.adId, b.adId) ||
          byCodeUnit(a.productId, b.productId),
      );
  }

  /** Column arrays of the breakdown rollup upsert (ProjectionRepository). */
  static columns(rows: BreakdownRow[]): unknown[] {
    return [
      textArrayLiteral(rows.map((r) => r.agentId)),
      textArrayLiteral(rows.map((r) => r.traffic)),
      arrayLiteral(rows.map((r) => new Date(r.bucketMs).toISOString())),
      textArrayLiteral(rows.map((r) => r.adId)),
      textArrayLiteral(rows.map((r) => r.productId)),
      ...BREAKDOWN_FIGURES.map((name) => arrayLiteral(rows.map((r) => r.figures[name]))),
    ];
  }
}
