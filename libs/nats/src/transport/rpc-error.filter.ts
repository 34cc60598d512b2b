import { Catch, Inject, Injectable, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { NatsContext, RpcException } from '@nestjs/microservices';
import { throwError, type Observable } from 'rxjs';
import { REQUEST_ID_HEADER, type RpcError } from '#libs/contracts';
import { LOGGER, type Logger } from '#libs/observability';
import { toRpcError } from './rpc-wire.js';

/**
 * The services' one exception filter for request/reply: an RpcException carries its typed
 * error (`not_found`, `invalid_request`, `unavailable`) to the caller as it is; anything else is
 * a bug or an outage, logged here with the subject and request id and answered `internal`.
 */
@Catch()
@Injectable()
export class RpcErrorFilter implements RpcExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): Observable<RpcError> {
    if (exception instanceof RpcException) return throwError(() => toRpcError(exception.getError()));
    const context = host.switchToRpc().getContext<unknown>();
    const subject = context instanceof NatsContext ? context.getSubject() : undefined;
    const requestId = context instanceof NatsContext ? (context.getHeaders()?.get(REQUEST_ID_HEADER) as string | undefined) : undefined;
    this.logger.error({ err: exception, subject, requestId }, 'request handler failed');
    return throwError(() => ({ code: 'internal', message: 'internal error' }) satisfies RpcError);
  }
}
