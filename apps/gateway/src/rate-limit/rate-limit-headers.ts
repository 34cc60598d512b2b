import type { ExecutionContext } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { seconds } from './rate-limited.exception.js';

/** A principal's bucket after the request: its limit a minute, what is left, when it is full again. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetMs: number;
}

/** The RateLimit-* headers of a bucket's state (RateLimit-Reset: seconds until the bucket is full). */
export function rateLimitHeaders({ limit, remaining, resetMs }: RateLimitState): Record<string, string> {
  return { 'RateLimit-Limit': String(limit), 'RateLimit-Remaining': String(Math.max(0, remaining)), 'RateLimit-Reset': seconds(resetMs) };
}

/**
 * Sends the RateLimit-* headers on the answer of the request a guard admitted (set before the
 * handler runs, so they are on its answer and on a problem it may throw: the problem filter keeps
 * headers already set). From the guard rather than an interceptor: an interceptor puts an RxJS
 * pipeline on every request of the read path (docs/decisions/gateway-rate-limiter.md).
 */
export function sendRateLimitHeaders(context: ExecutionContext, state: RateLimitState): void {
  void context.switchToHttp().getResponse<FastifyReply>().headers(rateLimitHeaders(state));
}
