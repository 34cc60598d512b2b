import { ServiceAbortError, ServiceConfigurationError, ServiceConnectionError } from './errors.js';
import { AttemptFailure, AttemptOutcome, isRetryableStatus, retryDelayMs, sendOnce, sleep } from './transport.js';
import { ServiceClientOptions, ServiceRequestOptions, ServiceSubscriptionOptions, ServiceWaitResult } from './types.js';
import { buildRequestBody, httpError, idempotencyKey, readResult, redact } from './wire.js';

/** Version of this package; sent in the User-Agent header. */
export const VERSION = '0.1.0';

/** Production address used when neither apiBaseUrl nor SERVICE_API_BASE_URL is given. */
export const DEFAULT_API_BASE_URL = 'https://api.weave.example';

/** Per-attempt timeout used when the client is constructed without timeoutMs. */
export const DEFAULT_TIMEOUT_MS = 30000;

/** Retries (after the first attempt) used when the client is constructed without maxRetries. */
export const DEFAULT_MAX_RETRIES = 2;

const RECOMMEND_PATH = '/agent/recommend';

// The key lives only here: not an own property of the client, so it cannot leak through
// JSON.stringify, util.inspect, Object.keys or a structured log of the client.
const apiKeys = new WeakMap<object, string>();

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** Client of the recommendation service. */
export class ServiceClient {
  /** Base address the client calls (without a trailing slash). */
  readonly apiBaseUrl: string;
  /** Per-attempt timeout in milliseconds. */
  readonly timeoutMs: number;
  /** Retries after the first attempt. */
  readonly maxRetries: number;

  constructor(options: ServiceClientOptions) {
    if (options === null || typeof options !== 'object') {
      throw new ServiceConfigurationError('ServiceClient options are required: new ServiceClient({ apiKey }).');
    }
    const apiKey = options.apiKey;
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      throw new ServiceConfigurationError(
        'apiKey is required: pass new ServiceClient({ apiKey: process.env.SERVICE_API_KEY }) with a non-empty key.',
      );
    }
    // A key that cannot travel in an HTTP header (a pasted line break, a space, a non-ASCII
    // character) is refused here, without echoing it, rather than by Node at request time.
    if (!/^[\x21-\x7e]+$/.test(apiKey.trim())) {
      throw new ServiceConfigurationError('apiKey contains characters an API key cannot have (spaces, line breaks or non-ASCII). Check SERVICE_API_KEY.');
    }
    const envBase = typeof process !== 'undefined' && process.env ? process.env.SERVICE_API_BASE_URL : undefined;
    const base = options.apiBaseUrl !== undefined ? options.apiBaseUrl : envBase || DEFAULT_API_BASE_URL;
    this.apiBaseUrl = normalizeBaseUrl(base);
    this.timeoutMs = positiveNumber(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs');
    if (options.maxRetries === undefined) {
      this.maxRetries = DEFAULT_MAX_RETRIES;
    } else {
      this.maxRetries = retryCount(options.maxRetries);
    }
    apiKeys.set(this, apiKey.trim());
    Object.defineProperty(this, INSPECT, {
      enumerable: false,
      value: () => `ServiceClient ${JSON.stringify(this.toJSON())}`,
    });
  }

  /** What JSON.stringify(client) shows: the settings, with the key redacted. */
  toJSON(): { apiBaseUrl: string; timeoutMs: number; maxRetries: number; apiKey: string } {
    return { apiBaseUrl: this.apiBaseUrl, timeoutMs: this.timeoutMs, maxRetries: this.maxRetries, apiKey: '[redacted]' };
  }

  /**
   * Asks the service for recommendations for one message of a conversation.
   * Resolves { found: true, recommendations, query, requestId } when there are some and
   * { found: false, error } when there are none (not a failure). Rejects with a ServiceError
   * subclass for invalid options, authentication, request, transport and abort failures.
   */
  async getRecommendationsForWeave(
    options: ServiceSubscriptionOptions,
    requestOptions?: ServiceRequestOptions,
  ): Promise<ServiceWaitResult> {
    const body = buildRequestBody(options);
    const callOptions = requestOptions || {};
    const signal = callOptions.signal;
    if (signal !== undefined && (signal === null || typeof signal !== 'object' || typeof signal.addEventListener !== 'function')) {
      throw new ServiceConfigurationError('signal must be an AbortSignal when given.');
    }
    const timeoutMs = positiveNumber(callOptions.timeoutMs, this.timeoutMs, 'timeoutMs');
    const maxRetries = callOptions.maxRetries === undefined ? this.maxRetries : retryCount(callOptions.maxRetries);
    const apiKey = apiKeys.get(this);
    if (apiKey === undefined) throw new ServiceConfigurationError('This ServiceClient was not constructed properly.');
    const payload = JSON.stringify(body);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Bearer ${apiKey}`,
      'idempotency-key': idempotencyKey(options.sessionId, options.messageId),
      'user-agent': `@vendor/weave-node/${VERSION} node/${process.version}`,
      'content-length': String(Buffer.byteLength(payload)),
    };
    const url = new URL(this.apiBaseUrl + RECOMMEND_PATH);

    for (let attempt = 0; ; attempt++) {
      if (signal && signal.aborted) throw new ServiceAbortError();
      headers['x-retry-count'] = String(attempt);
      const outcome: AttemptOutcome | AttemptFailure = await sendOnce(url, headers, payload, timeoutMs, signal);
      const retriesLeft = attempt < maxRetries;
      if (outcome instanceof AttemptFailure) {
        if (!retriesLeft || !outcome.retryable) {
          throw new ServiceConnectionError(
            redact(
              outcome.timedOut
                ? `Request to ${url.origin} timed out after ${timeoutMs} ms (${attempt + 1} attempt(s)).`
                : `Could not reach ${url.origin}: ${outcome.message} (${attempt + 1} attempt(s)).`,
              apiKey,
            ),
            outcome.timedOut,
          );
        }
        await sleep(retryDelayMs(attempt + 1, undefined), signal);
        continue;
      }
      const { status } = outcome;
      if (status >= 200 && status < 300) return readResult(outcome, options.query, apiKey);
      if (retriesLeft && isRetryableStatus(status)) {
        await sleep(retryDelayMs(attempt + 1, outcome.headers), signal);
        continue;
      }
      throw httpError(outcome, apiKey, attempt + 1);
    }
  }
}

function normalizeBaseUrl(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ServiceConfigurationError('apiBaseUrl must be a non-empty http(s) URL.');
  }
  let parsed: URL;
  try {
    parsed = new URL(value.trim());
  } catch {
    throw new ServiceConfigurationError('apiBaseUrl must be a valid http(s) URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ServiceConfigurationError('apiBaseUrl must use http: or https:.');
  }
  if (parsed.username || parsed.password) {
    throw new ServiceConfigurationError('apiBaseUrl must not carry credentials; pass the key as apiKey.');
  }
  return (parsed.origin + parsed.pathname).replace(/\/+$/, '');
}

function retryCount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ServiceConfigurationError('maxRetries must be a non-negative integer.');
  }
  return value;
}

function positiveNumber(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !isFinite(value) || value <= 0) {
    throw new ServiceConfigurationError(`${name} must be a positive number of milliseconds.`);
  }
  return value;
}
