import { headers as natsHeaders, type Msg, type Subscription } from '@nats-io/transport-node';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { REQUEST_ID_HEADER, type RpcError, type RpcReply } from '#libs/contracts';
import { histogram, type Logger } from '#libs/observability';
import type { NatsClient } from './nats-client.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** How every successful reply starts: `{"ok":true,"result":` then the result, then `}`. */
const OK_PREFIX = '{"ok":true,"result":';
const OK_PREFIX_BYTES = encoder.encode(OK_PREFIX);

const rpcServerSeconds = histogram('weave_rpc_handler_seconds', 'Time to answer a NATS request', ['subject', 'outcome']);
const rpcClientSeconds = histogram('weave_rpc_request_seconds', 'NATS request/reply round trips', ['subject', 'outcome']);

/**
 * A result already serialized to JSON (e.g. a cached reply): sent as it is, without another
 * JSON.stringify of a large object per request.
 */
export class SerializedResult {
  constructor(readonly json: string) {}
}

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
  handler: (request: TRequest, context: RpcContext) => Promise<TResult | SerializedResult>,
): Subscription {
  const respond = (msg: Msg, reply: RpcReply<TResult>) => msg.respond(encoder.encode(JSON.stringify(reply)));
  const respondWith = (msg: Msg, result: TResult | SerializedResult) =>
    result instanceof SerializedResult ? msg.respond(encoder.encode(`${OK_PREFIX}${result.json}}`)) : respond(msg, { ok: true, result });
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
          respondWith(msg, await handler(request, { requestId }));
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

async function send(nats: NatsClient, subject: string, payload: unknown, options: { timeoutMs: number; requestId?: string }, end: (labels: { outcome: string }) => void): Promise<Msg> {
  const h = natsHeaders();
  if (options.requestId) h.set(REQUEST_ID_HEADER, options.requestId);
  try {
    return await nats.connection.request(subject, encoder.encode(JSON.stringify(payload)), { timeout: options.timeoutMs, headers: h });
  } catch (error) {
    end({ outcome: 'unavailable' });
    throw new RpcUnavailableError(subject, error);
  }
}

/** Sends a request and returns the typed reply; a timeout or missing responder throws RpcUnavailableError. */
export async function requestRpc<TResult>(
  nats: NatsClient,
  subject: string,
  payload: unknown,
  options: { timeoutMs: number; requestId?: string },
): Promise<RpcReply<TResult>> {
  const end = rpcClientSeconds.startTimer({ subject });
  const reply = await send(nats, subject, payload, options, end);
  try {
    const parsed = JSON.parse(decoder.decode(reply.data)) as RpcReply<TResult>;
    end({ outcome: parsed.ok ? 'ok' : parsed.error.code });
    return parsed;
  } catch (error) {
    end({ outcome: 'unavailable' });
    throw new RpcUnavailableError(subject, error);
  }
}

function startsWithOk(data: Uint8Array): boolean {
  if (data.length <= OK_PREFIX_BYTES.length || data[data.length - 1] !== 0x7d) return false;
  for (let i = 0; i < OK_PREFIX_BYTES.length; i++) if (data[i] !== OK_PREFIX_BYTES[i]) return false;
  return true;
}

/**
 * Like requestRpc, but a successful result comes back as its JSON bytes, unparsed: a caller
 * that only forwards it (the gateway answering HTTP) saves parsing and re-serializing it.
 */
export async function requestRpcJson(
  nats: NatsClient,
  subject: string,
  payload: unknown,
  options: { timeoutMs: number; requestId?: string },
): Promise<{ ok: true; json: Uint8Array } | { ok: false; error: RpcError }> {
  const end = rpcClientSeconds.startTimer({ subject });
  const reply = await send(nats, subject, payload, options, end);
  if (startsWithOk(reply.data)) {
    end({ outcome: 'ok' });
    return { ok: true, json: reply.data.subarray(OK_PREFIX_BYTES.length, reply.data.length - 1) };
  }
  try {
    const parsed = JSON.parse(decoder.decode(reply.data)) as RpcReply<unknown>;
    end({ outcome: parsed.ok ? 'ok' : parsed.error.code });
    return parsed.ok ? { ok: true, json: encoder.encode(JSON.stringify(parsed.result)) } : parsed;
  } catch (error) {
    end({ outcome: 'unavailable' });
    throw new RpcUnavailableError(subject, error);
  }
}
