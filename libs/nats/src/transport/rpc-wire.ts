import { RPC_ERROR_CODES, type RpcError, type RpcErrorCode } from '#libs/contracts';

/**
 * The request/reply wire format of docs/asyncapi.yaml, shared by NatsRpcServer and
 * NatsRpcClient (the custom serializer/deserializer pair of our Nest NATS transport):
 *
 * - request: the request DTO as JSON, nothing around it; header `X-Request-Id` (optional);
 * - reply:   `{"ok":true,"result":…}` or `{"ok":false,"error":{"code","message"}}`.
 *
 * Nest's stock NATS format wraps both sides in `{pattern, data, id}` / `{id, response, err,
 * isDisposed}` envelopes; other teams' clients and our AsyncAPI document speak the plain one.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const OK_PREFIX = '{"ok":true,"result":';
const OK_PREFIX_BYTES = encoder.encode(OK_PREFIX);
const OK_SUFFIX = encoder.encode('}');

/**
 * JSON that is already serialized. A handler may return one (a cached reply: sent without a
 * JSON.stringify of a large object per request); a client configured with `rawResults` receives
 * one (forwarded by the gateway without a parse and re-serialization).
 */
export class RawJson {
  constructor(readonly bytes: Uint8Array) {}

  static of(json: string): RawJson {
    return new RawJson(encoder.encode(json));
  }

  parse<T>(): T {
    return JSON.parse(decoder.decode(this.bytes)) as T;
  }
}

export function encodeRequest(payload: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(payload));
}

/** The request body, or `undefined` when it is not JSON. */
export function decodeRequest(data: Uint8Array): { ok: true; payload: unknown } | { ok: false } {
  try {
    return { ok: true, payload: JSON.parse(decoder.decode(data)) };
  } catch {
    return { ok: false };
  }
}

export function encodeResult(result: unknown): Uint8Array {
  if (result instanceof RawJson) {
    const out = new Uint8Array(OK_PREFIX_BYTES.length + result.bytes.length + 1);
    out.set(OK_PREFIX_BYTES, 0);
    out.set(result.bytes, OK_PREFIX_BYTES.length);
    out.set(OK_SUFFIX, OK_PREFIX_BYTES.length + result.bytes.length);
    return out;
  }
  return encoder.encode(`${OK_PREFIX}${JSON.stringify(result ?? null)}}`);
}

export function encodeError(error: RpcError): Uint8Array {
  return encoder.encode(JSON.stringify({ ok: false, error: { code: error.code, message: error.message } }));
}

export function isRpcErrorCode(value: unknown): value is RpcErrorCode {
  return (RPC_ERROR_CODES as readonly unknown[]).includes(value);
}

/** What a handler's failure becomes on the wire: its typed error, or `internal`. */
export function toRpcError(error: unknown): RpcError {
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (isRpcErrorCode(code)) return { code, message: typeof message === 'string' ? message : code };
  }
  return { code: 'internal', message: 'internal error' };
}

function startsWithOk(data: Uint8Array): boolean {
  if (data.length <= OK_PREFIX_BYTES.length || data[data.length - 1] !== 0x7d) return false;
  for (let i = 0; i < OK_PREFIX_BYTES.length; i++) if (data[i] !== OK_PREFIX_BYTES[i]) return false;
  return true;
}

export type DecodedReply = { ok: true; result: unknown } | { ok: false; error: RpcError };

/**
 * Decodes a reply. With `raw`, a successful result comes back as a RawJson view of the bytes
 * (not parsed; copy it before keeping it, the message buffer may be reused).
 * Throws when the reply is not of the wire format at all.
 */
export function decodeReply(data: Uint8Array, raw = false): DecodedReply {
  if (raw && startsWithOk(data)) {
    return { ok: true, result: new RawJson(data.subarray(OK_PREFIX_BYTES.length, data.length - 1)) };
  }
  const parsed = JSON.parse(decoder.decode(data)) as { ok?: unknown; result?: unknown; error?: unknown };
  if (parsed?.ok === true) return { ok: true, result: raw ? RawJson.of(JSON.stringify(parsed.result ?? null)) : parsed.result };
  if (parsed?.ok === false) return { ok: false, error: toRpcError(parsed.error) };
  throw new Error('reply is not of the request/reply wire format');
}
