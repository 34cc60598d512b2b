import type { EarningsCoverage } from '#libs/contracts';

export interface CoverageFacts {
  /** The platform's accounting reconciliation watermark; null when none is known. */
  reconciledThrough: Date | null;
  /** Exclusive end of the report period. */
  end: Date;
  pendingRecommendations: number;
  reviewRequired: number;
}

/**
 * DESIGN §5: `unavailable` when no reconciliation watermark is known; `complete` when the
 * watermark has reached the end of the period and nothing is pending or under review;
 * otherwise `partial`.
 */
export function earningsCoverage(facts: CoverageFacts): EarningsCoverage {
  if (facts.reconciledThrough === null) return 'unavailable';
  const reconciledToEnd = facts.reconciledThrough.getTime() >= facts.end.getTime();
  const nothingOpen = facts.pendingRecommendations === 0 && facts.reviewRequired === 0;
  return reconciledToEnd && nothingOpen ? 'complete' : 'partial';
}

/** A report is stale when now − processed_through exceeds the stale threshold (DESIGN §2). */
export function reportStatus(processedThrough: Date, now: Date, staleAfterMs: number): 'ready' | 'stale' {
  return now.getTime() - processedThrough.getTime() > staleAfterMs ? 'stale' : 'ready';
}

/** A platform's watermark is the later of the global one and its own (DESIGN §4). */
export function platformWatermark(global: Date | null, own: Date | null): Date | null {
  if (global === null) return own;
  if (own === null) return global;
  return own.getTime() > global.getTime() ? own : global;
}
