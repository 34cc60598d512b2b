import * as http from 'node:http';
import * as https from 'node:https';
import { ServiceAbortError } from './errors.js';
import { ServiceAbortSignal } from './types.js';

// One HTTP attempt over node:http/node:https (not the global fetch, which Node 16 lacks) and the
// waits between attempts. Internal: index.ts does not export this module.

const INITIAL_RETRY_DELAY_MS = 500;
const MAX_RETRY_DELAY_MS = 8000;
const MAX_RETRY_AFTER_MS = 60000;
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface AttemptOutcome {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class AttemptFailure {
  /** retryable is false only when Node refused to send the request at all (same input, same refusal). */
  constructor(readonly message: string, readonly timedOut: boolean, readonly retryable = true) {}
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function headerValue(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After as milliseconds (seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(headers: http.IncomingHttpHeaders): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '' && isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headerValue(headers, 'retry-after');
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  if (isNaN(date)) return undefined;
  return Math.max(0, date - Date.now());
}

/**
 * Delay before retry number `retry` (1-based): the service's Retry-After (or Retry-After-Ms) when
 * it asks for a wait of at most 60 s; otherwise (no header, an unreadable one, or a longer wait
 * than 60 s) 0.5 s doubling per retry, capped at 8 s, minus up to 25 % jitter — as openai-node
 * and stripe-node do.
 */
export function retryDelayMs(retry: number, headers: http.IncomingHttpHeaders | undefined): number {
  const retryAfter = headers ? parseRetryAfter(headers) : undefined;
  if (retryAfter !== undefined && retryAfter <= MAX_RETRY_AFTER_MS) return retryAfter;
  const step = Math.min(MAX_RETRY_DELAY_MS, INITIAL_RETRY_DELAY_MS * Math.pow(2, retry - 1));
  return step * (1 - Math.random() * 0.25);
}

export function sleep(ms: number, signal: ServiceAbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal && signal.aborted) return reject(new ServiceAbortError());
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ServiceAbortError());
    };
    const timer = setTimeout(() => {
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal) signal.addEventListener('abort', onAbort);
  });
}

/** One HTTP attempt. Resolves an outcome or a transport failure; rejects only on abort. */
export function sendOnce(
  url: URL,
  headers: Record<string, string>,
  payload: string,
  timeoutMs: number,
  signal: ServiceAbortSignal | undefined,
): Promise<AttemptOutcome | AttemptFailure> {
  return new Promise<AttemptOutcome | AttemptFailure>((resolve, reject) => {
    let settled = false;
    let timedOut = false;
    let aborted = false;
    const transport = url.protocol === 'https:' ? https : http;
    const finish = (action: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
      action();
    };
    let req: http.ClientRequest;
    try {
      req = transport.request(url, { method: 'POST', headers }, onResponse);
    } catch (error) {
      // Node refuses some requests synchronously (an invalid header value, for example): that is
      // a failure of this attempt like any other, never a raw exception out of the client.
      resolve(new AttemptFailure(describeNetworkError(error as Error), false, false));
      return;
    }
    function onResponse(res: http.IncomingMessage): void {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy(new Error('response body too large'));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        finish(() => resolve({ status: res.statusCode || 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      });
      res.on('aborted', () => failed(new Error('connection closed before the answer was complete')));
      res.on('error', failed);
    }
    function failed(error: Error): void {
      if (aborted) return finish(() => reject(new ServiceAbortError()));
      finish(() => resolve(new AttemptFailure(timedOut ? 'timed out' : describeNetworkError(error), timedOut)));
    }
    function onAbort(): void {
      aborted = true;
      req.destroy();
      finish(() => reject(new ServiceAbortError()));
    }
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('timed out'));
    }, timeoutMs);
    if (signal) signal.addEventListener('abort', onAbort);
    req.on('error', failed);
    req.end(payload);
  });
}

export function describeNetworkError(error: Error): string {
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' ? `${code} ${error.message}` : error.message;
}
