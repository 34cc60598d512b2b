// Payout read model constants (DESIGN §4 "Payout read model", §5 "Payouts").

/** The one filter subject of the payouts-read durable (nats-server 2.9: a single filter). */
export const PAYOUT_EVENTS_FILTER = 'events.payouts.>';

export const PAYOUT_SETUP_STATUSES = ['not_started', 'in_progress', 'complete'] as const;
export type PayoutSetupStatus = (typeof PAYOUT_SETUP_STATUSES)[number];

export const PAYOUT_STATEMENT_STATUSES = ['LOCKED', 'BLOCKED', 'FAILED', 'PAID'] as const;
export type PayoutStatementStatus = (typeof PAYOUT_STATEMENT_STATUSES)[number];

/** Statuses listed by `/history` (SPEC: locked, blocked, failed and paid statements). */
export const PAYOUT_HISTORY_STATUSES: readonly PayoutStatementStatus[] = ['LOCKED', 'BLOCKED', 'FAILED', 'PAID'];

export const PAYOUTS_DEFAULT_PAGE = 1;
export const PAYOUTS_DEFAULT_PAGE_SIZE = 20;
export const PAYOUTS_MAX_PAGE_SIZE = 100;
/**
 * Highest page number a list accepts (a million statements at the largest page size, far
 * beyond any platform's history); a higher one is refused (422) rather than answered, so page
 * numbers cannot be used to make up unbounded distinct requests.
 */
export const PAYOUTS_MAX_PAGE = 10_000;
/** Statements in `/overview`'s `recent_statements`, newest period first. */
export const PAYOUTS_RECENT_STATEMENTS = 5;
