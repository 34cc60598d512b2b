import { Header, Injectable, UseInterceptors, applyDecorators, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mergeMap, type Observable } from 'rxjs';
import { negotiateEncoding } from './content-encoding.js';
import type { PayoutReply } from './payouts-reply-cache.js';

/**
 * The HTTP form of a PayoutReply: its JSON bytes as `application/json`; a large reply (a page
 * of many statements) compressed with br or gzip when the request's Accept-Encoding takes one,
 * with `Vary: Accept-Encoding`. The compressed form is the reply's own, computed once per cached
 * reply (docs/decisions/payout-compression-in-the-reply-cache.md).
 */
@Injectable()
export class PayoutReplyInterceptor implements NestInterceptor<PayoutReply, Buffer> {
  intercept(context: ExecutionContext, next: CallHandler<PayoutReply>): Observable<Buffer> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    return next.handle().pipe(mergeMap((answer) => encode(answer, request, reply)));
  }
}

async function encode(answer: PayoutReply, request: FastifyRequest, reply: FastifyReply): Promise<Buffer> {
  void reply.type('application/json; charset=utf-8');
  if (!answer.large) return answer.body;
  void reply.header('Vary', 'Accept-Encoding');
  const encoding = negotiateEncoding(request.headers['accept-encoding']);
  if (!encoding) return answer.body;
  const compressed = await answer.encoded(encoding);
  void reply.header('Content-Encoding', encoding);
  return compressed;
}

/** A payout route's answer: private to the platform (no shared caches), in its HTTP form. */
export function PayoutReplyRoute(): MethodDecorator {
  return applyDecorators(Header('Cache-Control', 'private, no-store'), UseInterceptors(PayoutReplyInterceptor));
}
