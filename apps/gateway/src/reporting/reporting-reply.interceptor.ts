import { Catch, Header, Injectable, UseFilters, UseInterceptors, applyDecorators, type ArgumentsHost, type CallHandler, type ExceptionFilter, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { map, type Observable } from 'rxjs';
import { PREPARING_RETRY_AFTER_SECONDS, PreparingReport, SeriesCsvFile, isPreparing } from './reporting.service.js';

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

/** A report still being prepared: 202 with Retry-After and the PreparingReport bytes (the route's headers stay). */
@Catch(PreparingReport)
export class PreparingReportFilter implements ExceptionFilter<PreparingReport> {
  catch(preparing: PreparingReport, host: ArgumentsHost): void {
    void host.switchToHttp().getResponse<FastifyReply>().status(202).header('Retry-After', String(PREPARING_RETRY_AFTER_SECONDS)).send(preparing.body);
  }
}

/** Reports and series are private to the platform and change every minute: no shared caches. */
const PRIVATE = Header('Cache-Control', 'private, no-store');

/**
 * The report route's answer: JSON bytes with fixed headers, and PreparingReport as 202
 * (PreparingReportFilter). No interceptor: this is the busiest route of the gateway.
 */
export function ReportReply(): MethodDecorator {
  return applyDecorators(PRIVATE, Header('Content-Type', 'application/json; charset=utf-8'), UseFilters(PreparingReportFilter));
}

/** A series route's answer, in its HTTP form (ReportingReplyInterceptor: JSON or a CSV attachment, 202 while preparing). */
export function SeriesReply(): MethodDecorator {
  return applyDecorators(PRIVATE, UseInterceptors(ReportingReplyInterceptor));
}
