import { Header, Injectable, UseInterceptors, applyDecorators, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { map, type Observable } from 'rxjs';
import { PREPARING_RETRY_AFTER_SECONDS, SeriesCsvFile, isPreparing } from './reporting.service.js';

/**
 * The HTTP form of a ReportingService answer: JSON bytes as `application/json` (a
 * PreparingReport as 202 with Retry-After), a SeriesCsvFile as a `text/csv` attachment.
 */
@Injectable()
export class ReportingReplyInterceptor implements NestInterceptor<Buffer | SeriesCsvFile, Buffer | string> {
  intercept(context: ExecutionContext, next: CallHandler<Buffer | SeriesCsvFile>): Observable<Buffer | string> {
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      map((answer) => {
        if (answer instanceof SeriesCsvFile) {
          void reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${answer.filename}"`);
          return answer.body;
        }
        void reply.type('application/json; charset=utf-8');
        if (isPreparing(answer)) void reply.status(202).header('Retry-After', String(PREPARING_RETRY_AFTER_SECONDS));
        return answer;
      }),
    );
  }
}

/** A reporting route's answer: private to the platform and changing every minute (no shared caches), in its HTTP form. */
export function ReportingReply(): MethodDecorator {
  return applyDecorators(Header('Cache-Control', 'private, no-store'), UseInterceptors(ReportingReplyInterceptor));
}
