import { problemMessage, type Outcome } from '../api/outcome.js';

/**
 * The state of one thing a page loads (a report, the key list, a statement…). Every page shows
 * each phase: loading, the data, "being prepared" (202, retried by itself), "temporarily
 * unavailable" (503, with a try-again button), an error with the API's explanation, or nothing
 * at all when the session ended (401 signs out; the signed-out page takes over).
 */
export type ResourceState<T> =
  | { phase: 'loading'; previous?: T }
  | { phase: 'ready'; data: T }
  | { phase: 'preparing'; attempt: number; retryInMs: number }
  | { phase: 'unavailable'; message: string }
  | { phase: 'error'; status?: number; message: string }
  | { phase: 'signed-out' };

/** `fresh`: a different thing is loaded now (another range, traffic, page): forget the old state. */
export type ResourceEvent<T> = { type: 'load'; fresh?: boolean } | { type: 'outcome'; outcome: Outcome<T> };

/** First automatic retry of a 202 after this; then doubling up to the server's Retry-After. */
export const FIRST_PREPARING_RETRY_MS = 5000;

/**
 * Wait before retry number `attempt` (0-based) of a scope that is being prepared: 5 s, 10 s,
 * 20 s, … never more than the server's Retry-After (it knows when the next publication is due),
 * never less than 1 s.
 */
export function preparingRetryDelayMs(attempt: number, retryAfterSeconds: number): number {
  const ceiling = Math.max(1000, retryAfterSeconds * 1000);
  const backoff = FIRST_PREPARING_RETRY_MS * 2 ** Math.min(Math.max(attempt, 0), 16);
  return Math.min(backoff, ceiling);
}

export const initialResourceState = <T>(): ResourceState<T> => ({ phase: 'loading' });

export function resourceReducer<T>(state: ResourceState<T>, event: ResourceEvent<T>): ResourceState<T> {
  if (event.type === 'load') {
    if (event.fresh) return { phase: 'loading' };
    if (state.phase === 'preparing') return state; // keep counting attempts while it retries
    return state.phase === 'ready' ? { phase: 'loading', previous: state.data } : { phase: 'loading' };
  }
  const { outcome } = event;
  switch (outcome.kind) {
    case 'ok':
      return { phase: 'ready', data: outcome.data };
    case 'preparing': {
      const attempt = state.phase === 'preparing' ? state.attempt + 1 : 0;
      return { phase: 'preparing', attempt, retryInMs: preparingRetryDelayMs(attempt, outcome.retryAfterSeconds) };
    }
    case 'unauthorized':
      return { phase: 'signed-out' };
    case 'unavailable':
      return { phase: 'unavailable', message: problemMessage(outcome.problem, 'The service is temporarily unavailable.') };
    case 'network':
      return { phase: 'unavailable', message: `The dashboard could not reach the API (${outcome.message}).` };
    case 'problem':
      return { phase: 'error', status: outcome.status, message: problemMessage(outcome.problem) };
  }
}

/** The data to show while reloading: the last good data, so tables do not flash empty. */
export function visibleData<T>(state: ResourceState<T>): T | undefined {
  if (state.phase === 'ready') return state.data;
  if (state.phase === 'loading') return state.previous;
  return undefined;
}
