import { headers as natsHeaders, type Msg, type Subscription } from '@nats-io/transport-node';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { REQUEST_ID_HEADER, type RpcError, type RpcReply } from '#libs/contracts';
import { histogram, type Logger } from '#libs/observability';
import type { NatsClient } from './nats-client.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const rpcServerSeconds = histogram('weave_rpc_handler_seconds', 'Time to answer a NATS request', ['subject', 'outcome']);
const rpcClientSeconds = histogram('weave_rpc_request_seconds', 'NATS request/reply round trips', ['subject', 'outcome']);

/** A failure a handler reports on purpose, mapped to an HTTP status by the gateway. */
export class RpcHandlerError extends Error {
  constructor(readonly rpcError: RpcError) {
    super(rpcError.message);
  }
}

/** The service did not answer in time, or nobody listens on the subject. */
export class RpcUnavailableError extends Error {
  constructor(subject: string, cause: unknown) {
    super(`${subject} did not answer: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'RpcUnavailableError';
  }
}

export interface RpcContext {
  requestId?: string;
}

/**
 * Serves one request/reply subject in a queue group so that replicas share the requests.
 * The request body is validated against its DTO class before the handler sees it.
 */
export function serveRpc<TRequest extends object, TResult>(
  nats: NatsClient,
  subject: string,
  options: {
    queue: string;
    requestClass: new () => TRequest;
    logger: Logger;
    /** A pre-check that accepts only what the DTO accepts; when it says yes, class-validator is skipped. */
    fastCheck?: (payload: unknown) => boolean;
  },
  handler: (request: TRequest, context: RpcContext) => Promise<TResult>,
): Subscription {
  const respond = (msg: Msg, reply: RpcReply<TResult>) => msg.respond(encoder.encode(JSON.stringify(reply)));
  return nats.connection.subscribe(subject, {
    queue: options.queue,
    callback: (error, msg) => {
      if (error) {
        options.logger.error({ err: error, subject }, 'subscription error');
        return;
      }
      const end = rpcServerSeconds.startTimer({ subject });
      const requestId = msg.headers?.get(REQUEST_ID_HEADER) || undefined;
      void (async () => {
        let payload: unknown;
        try {
          payload = JSON.parse(decoder.decode(msg.data));
        } catch {
          respond(msg, { ok: false, error: { code: 'invalid_request', message: 'request is not JSON' } });
          end({ outcome: 'invalid_request' });
          return;
        }
        if (options.fastCheck?.(payload)) {
          await answer(payload as TRequest);
          return;
        }
        const request = plainToInstance(options.requestClass, payload);
        const problems = typeof payload === 'object' && payload !== null ? await validate(request, { whitelist: true, forbidNonWhitelisted: true }) : [];
        if (typeof payload !== 'object' || payload === null || problems.length > 0) {
          const message = problems.flatMap((p) => Object.values(p.constraints ?? {})).join('; ') || 'request must be an object';
          respond(msg, { ok: false, error: { code: 'invalid_request', message } });
          end({ outcome: 'invalid_request' });
          return;
        }
        await answer(request);
      })();

      async function answer(request: TRequest) {
        try {
          respond(msg, { ok: true, result: await handler(request, { requestId }) });
          end({ outcome: 'ok' });
        } catch (failure) {
          if (failure instanceof RpcHandlerError) {
            respond(msg, { ok: false, error: failure.rpcError });
            end({ outcome: failure.rpcError.code });
          } else {
            options.logger.error({ err: failure, subject, requestId }, 'request handler failed');
            respond(msg, { ok: false, error: { code: 'internal', message: 'internal error' } });
            end({ outcome: 'internal' });
          }
        }
      }
    },
  });
}

/** Sends a request and returns the typed reply; a timeout or missing responder throws RpcUnavailableError. */
export async function requestRpc<TResult>(
  nats: NatsClient,
  subject: string,
  payload: unknown,
  options: { timeoutMs: number; requestId?: string },
): Promise<RpcReply<TResult>> {
  const end = rpcClientSeconds.startTimer({ subject });
  const h = natsHeaders();
  if (options.requestId) h.set(REQUEST_ID_HEADER, options.requestId);
  let reply: Msg;
  try {
    reply = await nats.connection.request(subject, encoder.encode(JSON.stringify(payload)), {
      timeout: options.timeoutMs,
      headers: h,
    });
  } catch (error) {
    end({ outcome: 'unavailable' });
    throw new RpcUnavailableError(subject, error);
  }
  try {
    const parsed = JSON.parse(decoder.decode(reply.data)) as RpcReply<TResult>;
    end({ outcome: parsed.ok ? 'ok' : parsed.error.code });
    return parsed;
  } catch (error) {
    end({ outcome: 'unavailable' });
    throw new RpcUnavailableError(subject, error);
  }
}
