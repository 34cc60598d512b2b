// Payout read model contracts (issue 4): events.payouts.* payloads and request/reply DTOs.
export {};
