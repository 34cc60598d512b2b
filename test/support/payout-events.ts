/** Statement statuses in the order the fixtures cycle through them. */
export const PAYOUT_STATUSES = ['LOCKED', 'BLOCKED', 'FAILED', 'PAID'] as const;

/**
 * Payload of `events.payouts.statement` for statement n of a platform: month n from January
 * 2024, statuses cycling LOCKED, BLOCKED, FAILED, PAID, each with the details its status carries.
 */
export function payoutStatementEvent(agent: string, n: number, version = 1, overrides: Record<string, unknown> = {}) {
  const start = new Date(Date.UTC(2024, n, 1));
  const end = new Date(Date.UTC(2024, n + 1, 1));
  const status = PAYOUT_STATUSES[n % 4];
  return {
    statement_id: `st_${agent}_${String(n).padStart(2, '0')}`,
    agent_id: agent,
    period_start: start.toISOString(),
    period_end: end.toISOString(),
    currency: 'USD',
    status,
    gross_earnings_micros: 10_000_000 + n,
    service_fee_micros: 1_000_000,
    net_earnings_micros: 9_000_000 + n,
    blocked_reason: status === 'BLOCKED' ? 'tax form missing' : null,
    failure: status === 'FAILED' ? { code: 'account_closed', message: 'The beneficiary account is closed' } : null,
    transfer:
      status === 'PAID'
        ? {
            transfer_reference: `tr_${agent}_${n}`,
            status: 'settled',
            initiated_at: end.toISOString(),
            settled_at: new Date(end.getTime() + 2 * 86_400_000).toISOString(),
            source_currency: 'USD',
            source_amount_micros: 9_000_000 + n,
            target_currency: 'EUR',
            amount_received_micros: 8_200_000,
            fee_micros: 150_000,
            exchange_rate: '0.9277',
          }
        : null,
    created_at: end.toISOString(),
    updated_at: end.toISOString(),
    version,
    ...overrides,
  };
}

/**
 * Payload of `events.payouts.balance`: amounts counted up from `base` (pending base, available
 * base + 1, locked base + 2, paid out base + 3), version 1, unless the overrides say otherwise.
 */
export function payoutBalanceEvent(agent: string, currency: string, base: number, overrides: Record<string, unknown> = {}) {
  return {
    agent_id: agent,
    currency,
    pending_micros: base,
    available_micros: base + 1,
    locked_micros: base + 2,
    paid_out_micros: base + 3,
    updated_at: '2026-11-20T10:15:42.120Z',
    version: 1,
    ...overrides,
  };
}
