import { counter } from '#libs/observability';
import { ProblemException } from '../http/problem.js';
import type { PrincipalKind } from './rate-limit.store.js';

/** Why a request was answered 429: its principal's limit, or its address's failed authentications. */
export type RejectionReason = PrincipalKind | 'auth_failures';

const rejections = counter('weave_rate_limit_rejections_total', 'Requests answered 429 by the gateway rate limiter', ['reason']);

const DETAILS: Record<RejectionReason, string> = {
  api_key: 'Too many requests with this API key; retry after the number of seconds in Retry-After.',
  id_token: 'Too many requests from this account; retry after the number of seconds in Retry-After.',
  auth_failures: 'Too many failed authentication attempts from this address; retry after the number of seconds in Retry-After.',
};

/** Milliseconds as whole seconds for Retry-After and RateLimit-Reset (at least 1). */
export const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));

/** The 429 problem (counted by reason), with Retry-After and any `headers` (RateLimit-*). */
export function rateLimited(reason: RejectionReason, retryMs: number, headers: Record<string, string> = {}): ProblemException {
  rejections.inc({ reason });
  return new ProblemException('rate-limited', DETAILS[reason], { ...headers, 'Retry-After': seconds(retryMs) });
}
