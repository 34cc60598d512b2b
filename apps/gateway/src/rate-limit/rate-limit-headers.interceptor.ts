import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import { seconds } from './rate-limited.exception.js';

/** Where the rate limiter leaves the state of the request's principal bucket for the headers. */
export const RATE_LIMIT = Symbol('rateLimit');

/** A principal's bucket after the request: its limit a minute, what is left, when it is full again. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetMs: number;
}

export type RequestWithRateLimit = { [RATE_LIMIT]?: RateLimitState };

/** The RateLimit-* headers of a bucket's state (RateLimit-Reset: seconds until the bucket is full). */
export function rateLimitHeaders({ limit, remaining, resetMs }: RateLimitState): Record<string, string> {
  return { 'RateLimit-Limit': String(limit), 'RateLimit-Remaining': String(Math.max(0, remaining)), 'RateLimit-Reset': seconds(resetMs) };
}

/**
 * Sends RateLimit-Limit, -Remaining and -Reset on the answers of routes under a principal limit
 * (what the guard's RateLimitService left on the request; nothing without a limit or when Redis
 * did not answer). Set before the handler runs, so they are on its answer and on the problem
 * it may throw (the problem filter keeps headers already set). A 429 from the limiter carries
 * them in its exception instead: guards run before interceptors.
 */
@Injectable()
export class RateLimitHeadersInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const state = http.getRequest<RequestWithRateLimit>()[RATE_LIMIT];
    if (state) void http.getResponse<FastifyReply>().headers(rateLimitHeaders(state));
    return next.handle();
  }
}
