// The errors @vendor/weave-node throws: every one is a ServiceError (re-exported by index.ts).

/** Base class of every error thrown by this library. */
export class ServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceError';
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** Invalid client configuration or invalid call options; raised before any request. */
export class ServiceConfigurationError extends ServiceError {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceConfigurationError';
  }
}

/** Fields of an HTTP error answer, as ServiceRequestError and its subclasses carry them. */
export interface ServiceErrorDetails {
  /** Request identifier of the answer (body request_id or X-Request-Id header), when given. */
  requestId?: string;
  /** Machine-readable code: the body's code, else the last segment of the problem type URI. */
  code?: string;
  /** RFC 9457 problem type URI, when the body is a problem. */
  type?: string;
  /** RFC 9457 title, when the body is a problem. */
  title?: string;
  /** RFC 9457 detail, when the body is a problem. */
  detail?: string;
  /** Wait the service asked for (Retry-After), in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

/**
 * The service answered with an HTTP error status (after the retries, for retryable statuses).
 * The message is the problem's detail, else its title, else a generic sentence.
 */
export class ServiceRequestError extends ServiceError {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Request identifier of the answer, when the service gave one. */
  readonly requestId: string | undefined;
  /** Machine-readable error code of the answer, when present. */
  readonly code: string | undefined;
  /** RFC 9457 problem type URI, when present. */
  readonly type: string | undefined;
  /** RFC 9457 problem title, when present. */
  readonly title: string | undefined;
  /** RFC 9457 problem detail, when present. */
  readonly detail: string | undefined;
  /** Retry-After of the answer in milliseconds, when present. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, status: number, details?: ServiceErrorDetails) {
    super(message);
    this.name = 'ServiceRequestError';
    this.status = status;
    const d = details || {};
    this.requestId = d.requestId;
    this.code = d.code;
    this.type = d.type;
    this.title = d.title;
    this.detail = d.detail;
    this.retryAfterMs = d.retryAfterMs;
  }
}

/**
 * 401 (key invalid or not sent: a configuration fault, fix SERVICE_API_KEY) or 403 (platform
 * account unavailable: contact support). Never retried.
 */
export class ServiceAuthenticationError extends ServiceRequestError {
  constructor(message: string, status: number, details?: ServiceErrorDetails) {
    super(message, status, details);
    this.name = 'ServiceAuthenticationError';
  }
}

/** 429: still rate limited after the retries; retryAfterMs says how long the service asked to wait. */
export class ServiceRateLimitError extends ServiceRequestError {
  constructor(message: string, status: number, details?: ServiceErrorDetails) {
    super(message, status, details);
    this.name = 'ServiceRateLimitError';
  }
}

/** The service could not be reached or did not answer in time (after the retries). */
export class ServiceConnectionError extends ServiceError {
  /** True when the last attempt ran out of its timeout. */
  readonly timedOut: boolean;
  constructor(message: string, timedOut?: boolean) {
    super(message);
    this.name = 'ServiceConnectionError';
    this.timedOut = timedOut === true;
  }
}

/** The service answered 200 with a body this library cannot read. */
export class ServiceResponseError extends ServiceError {
  readonly status: number;
  readonly requestId: string | undefined;
  constructor(message: string, status: number, requestId?: string) {
    super(message);
    this.name = 'ServiceResponseError';
    this.status = status;
    this.requestId = requestId;
  }
}

/** The caller's signal aborted the call; no further attempt is made. */
export class ServiceAbortError extends ServiceError {
  constructor(message?: string) {
    super(message || 'The request was aborted.');
    this.name = 'ServiceAbortError';
  }
}
