/**
 * Envelope of every request/reply answer: a result, or a typed error the gateway maps to an
 * HTTP status. Keeping the mapping in the gateway means services never speak HTTP.
 */
export const RPC_ERROR_CODES = ['invalid_request', 'not_found', 'unavailable', 'internal'] as const;
export type RpcErrorCode = (typeof RPC_ERROR_CODES)[number];

export interface RpcError {
  code: RpcErrorCode;
  message: string;
}

export type RpcReply<T> = { ok: true; result: T } | { ok: false; error: RpcError };
