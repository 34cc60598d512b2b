/** Payouts need the `agent` role (DESIGN §7, SPEC "Authentication"). */
export const PAYOUTS_ROLE = 'agent';

/** Renew this long before the ID token (or the access token) expires. */
export const RENEW_BEFORE_EXPIRY_MS = 60_000;

export interface SessionTimers {
  /** When to renew (refresh token grant); already due when ≤ now. */
  renewAt: number;
  /** When the session is over unless renewed: the ID token's `exp` (the API refuses it after). */
  expireAt: number;
}

/**
 * When to renew and when to give up, from the ID token's `exp` (seconds) and the access token's
 * expiry (seconds, when known). The API calls carry the ID token, so its `exp` is the hard end;
 * renewal starts a minute before the earlier of the two expiries.
 */
export function sessionTimers(idTokenExp: number, accessTokenExp: number | undefined): SessionTimers {
  const expireAt = idTokenExp * 1000;
  const earliest = Math.min(expireAt, (accessTokenExp ?? idTokenExp) * 1000);
  return { renewAt: earliest - RENEW_BEFORE_EXPIRY_MS, expireAt };
}
