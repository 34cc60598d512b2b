import {
  PAYOUT_STATEMENT_STATUSES,
  PAYOUTS_MAX_PAGE_SIZE,
  type PayoutStatementStatus,
} from '#libs/contracts';

/** The query parameters a payout endpoint may take (none for balance, readiness, overview, one statement). */
export type PayoutsQueryParameter = 'page' | 'page_size' | 'status';

export interface PayoutsQuery {
  page?: number;
  page_size?: number;
  status?: PayoutStatementStatus;
}

export type PayoutsQueryResult = { ok: true; query: PayoutsQuery } | { ok: false; detail: string };

/** The parameters of /statements and of /history. */
export const STATEMENTS_PARAMETERS: readonly PayoutsQueryParameter[] = ['page', 'page_size', 'status'];
export const HISTORY_PARAMETERS: readonly PayoutsQueryParameter[] = ['page', 'page_size'];
export const NO_PARAMETERS: readonly PayoutsQueryParameter[] = [];

const BOUNDS = { page: [1, Number.MAX_SAFE_INTEGER], page_size: [1, PAYOUTS_MAX_PAGE_SIZE] } as const;
const shown = (text: string) => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);

function decode(component: string): string | null {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

function supported(allowed: readonly PayoutsQueryParameter[]): string {
  return allowed.length === 0 ? 'this endpoint takes no query parameters.' : `supported parameters: ${allowed.join(', ')}.`;
}

/**
 * Validates the raw query string of a payout endpoint (DESIGN §5: out-of-range or unknown
 * parameters → 422). Works on the raw URL, as the reporting query does, so that a repeated
 * parameter, an empty value or a parameter without `=` cannot hide in a parser's choices.
 * page is an integer ≥ 1, page_size an integer from 1 to 100 (decimal digits only: no sign,
 * exponent, fraction or spaces), status one of LOCKED, BLOCKED, FAILED, PAID (exact case).
 * Absent parameters are left out: payouts-read applies the defaults (page 1, page_size 20).
 */
export function parsePayoutsQuery(rawUrl: string, allowed: readonly PayoutsQueryParameter[]): PayoutsQueryResult {
  const mark = rawUrl.indexOf('?');
  const query: PayoutsQuery = {};
  if (mark < 0) return { ok: true, query };
  const hash = rawUrl.indexOf('#', mark);
  const seen = new Set<string>();

  for (const segment of rawUrl.slice(mark + 1, hash < 0 ? undefined : hash).split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const name = decode(eq < 0 ? segment : segment.slice(0, eq));
    const value = eq < 0 ? '' : decode(segment.slice(eq + 1));
    if (name === null || value === null) return { ok: false, detail: 'The query string is not valid percent-encoding.' };
    if (!(allowed as readonly string[]).includes(name)) {
      return { ok: false, detail: `Unsupported query parameter ${shown(name)}: ${supported(allowed)}` };
    }
    const parameter = name as PayoutsQueryParameter;
    if (seen.has(parameter)) return { ok: false, detail: `${parameter} must be given at most once.` };
    seen.add(parameter);

    if (parameter === 'status') {
      if (!(PAYOUT_STATEMENT_STATUSES as readonly string[]).includes(value)) {
        return { ok: false, detail: `Unsupported status ${shown(value)}. Allowed values of status: ${PAYOUT_STATEMENT_STATUSES.join(', ')}.` };
      }
      query.status = value as PayoutStatementStatus;
      continue;
    }
    const [min, max] = BOUNDS[parameter];
    const n = /^\d{1,16}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      const range = parameter === 'page' ? 'an integer ≥ 1' : `an integer from ${min} to ${max}`;
      return { ok: false, detail: `${parameter} must be ${range}; got ${shown(value)}.` };
    }
    query[parameter] = n;
  }
  return { ok: true, query };
}
