import { createHash } from 'node:crypto';
import {
  ServiceAuthenticationError,
  ServiceConfigurationError,
  ServiceError,
  ServiceErrorDetails,
  ServiceRateLimitError,
  ServiceRequestError,
  ServiceResponseError,
} from './errors.js';
import { AttemptOutcome, headerValue, parseRetryAfter } from './transport.js';
import { ServiceCreativeInput, ServiceRecommendation, ServiceSubscriptionOptions, ServiceWaitResult } from './types.js';

// What travels over the wire: the snake_case request body built from the caller's options, and
// the answers read back into results and typed errors. Internal: index.ts does not export it.

const NOT_FOUND_MESSAGE = 'No recommendations found for this query.';

function requireText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ServiceConfigurationError(`${name} is required and must be a non-empty string.`);
  }
  return value;
}

function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ServiceConfigurationError(`${name} must be a string when given.`);
  return value;
}

/** Validates the options and builds the snake_case wire body. Throws before any request. */
export function buildRequestBody(options: ServiceSubscriptionOptions): Record<string, unknown> {
  if (options === null || typeof options !== 'object') {
    throw new ServiceConfigurationError('getRecommendationsForWeave needs an options object with sessionId, messageId and query.');
  }
  const body: Record<string, unknown> = {
    session_id: requireText(options.sessionId, 'sessionId'),
    message_id: requireText(options.messageId, 'messageId'),
    query: requireText(options.query, 'query'),
  };
  if (options.latencyBudgetMs !== undefined) {
    const budget = options.latencyBudgetMs;
    if (typeof budget !== 'number' || !isFinite(budget) || budget <= 0) {
      throw new ServiceConfigurationError('latencyBudgetMs must be a positive number of milliseconds.');
    }
    body.latency_budget_ms = budget;
  }
  if (options.messages !== undefined) {
    if (!Array.isArray(options.messages)) throw new ServiceConfigurationError('messages must be an array when given.');
    body.messages = options.messages.map((message, index) => {
      if (message === null || typeof message !== 'object') {
        throw new ServiceConfigurationError(`messages[${index}] must be an object with role and content.`);
      }
      const role = message.role;
      const content = message.content;
      if (typeof role !== 'string' || typeof content !== 'string') {
        throw new ServiceConfigurationError(`messages[${index}] must have string role and content.`);
      }
      const entry: Record<string, string> = { role, content };
      const id = optionalText(message.id, `messages[${index}].id`);
      if (id !== undefined) entry.id = id;
      return entry;
    });
  }
  const optional: Array<[keyof ServiceSubscriptionOptions, string]> = [
    ['locale', 'locale'],
    ['geo', 'geo'],
    ['userId', 'user_id'],
    ['model', 'model'],
    ['platformId', 'platform_id'],
    ['platformSurface', 'platform_surface'],
  ];
  for (const [name, wire] of optional) {
    const value = optionalText(options[name], name);
    if (value !== undefined) body[wire] = value;
  }
  return body;
}

/** Same sessionId + messageId → same key, so a retried or repeated call is not a new request. */
export function idempotencyKey(sessionId: string, messageId: string): string {
  return 'weave-' + createHash('sha256').update(`${sessionId}\u0000${messageId}`).digest('hex').slice(0, 48);
}

export function redact(message: string, apiKey: string): string {
  return apiKey ? message.split(apiKey).join('[redacted]') : message;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stringField(record: Record<string, unknown>, name: string): string | undefined {
  const value = record[name];
  return typeof value === 'string' ? value : undefined;
}

/** Last path segment of a problem type URI (https://…/problems/invalid-api-key → invalid-api-key). */
function problemCode(type: string | undefined): string | undefined {
  if (type === undefined || type === 'about:blank') return undefined;
  const segment = type.replace(/[?#].*$/, '').replace(/\/+$/, '').split('/').pop();
  return segment ? segment : undefined;
}

const GENERIC_MESSAGES: Record<number, string> = {
  401: 'The API key is invalid or was not sent. Check SERVICE_API_KEY.',
  403: 'The platform account is unavailable. Contact support.',
  429: 'Too many requests.',
};

/**
 * The error for an HTTP error answer. An RFC 9457 problem body gives the message (its detail,
 * else its title); other JSON bodies ({ error: { code, message } }, { message }, { error }) are
 * read too. Every text taken from the answer is redacted of the key, in case a server echoes it.
 */
export function httpError(outcome: AttemptOutcome, apiKey: string, attempts: number): ServiceError {
  const parsed = parseJson(outcome.body);
  const record = isRecord(parsed) ? parsed : {};
  const nested = isRecord(record.error) ? record.error : {};
  const clean = (value: string | undefined): string | undefined => (value === undefined ? undefined : redact(value, apiKey));
  const type = clean(stringField(record, 'type'));
  const title = clean(stringField(record, 'title'));
  const detail = clean(stringField(record, 'detail'));
  const other = clean(stringField(nested, 'message') || stringField(record, 'message') || stringField(record, 'error'));
  const { status } = outcome;
  const details: ServiceErrorDetails = {
    requestId: clean(stringField(record, 'request_id') || headerValue(outcome.headers, 'x-request-id')),
    code: clean(stringField(nested, 'code') || stringField(record, 'code')) || problemCode(type),
    type,
    title,
    detail,
    retryAfterMs: parseRetryAfter(outcome.headers),
  };
  const generic = GENERIC_MESSAGES[status] || `The service answered ${status}${attempts > 1 ? ` (after ${attempts} attempts)` : ''}.`;
  const message = detail || title || other || generic;
  if (status === 401 || status === 403) return new ServiceAuthenticationError(message, status, details);
  if (status === 429) return new ServiceRateLimitError(message, status, details);
  return new ServiceRequestError(message, status, details);
}

export function readResult(outcome: AttemptOutcome, query: string, apiKey: string): ServiceWaitResult {
  const parsed = parseJson(outcome.body);
  const requestIdHeader = headerValue(outcome.headers, 'x-request-id');
  if (!isRecord(parsed)) {
    throw new ServiceResponseError(redact(`The service answered ${outcome.status} with a body that is not a JSON object.`, apiKey), outcome.status, requestIdHeader);
  }
  const requestId = stringField(parsed, 'request_id') || requestIdHeader;
  const list = parsed.recommendations === undefined || parsed.recommendations === null ? [] : parsed.recommendations;
  if (!Array.isArray(list)) {
    throw new ServiceResponseError('The service answered with recommendations that are not an array.', outcome.status, requestId);
  }
  const recommendations = list.map((entry, index) => toRecommendation(entry, index, outcome.status, requestId));
  const resultQuery = stringField(parsed, 'query') || query;
  if (recommendations.length === 0) {
    const result: ServiceWaitResult = { found: false, error: redact(stringField(parsed, 'error') || NOT_FOUND_MESSAGE, apiKey), query: resultQuery };
    if (requestId !== undefined) result.requestId = requestId;
    return result;
  }
  const result: ServiceWaitResult = { found: true, recommendations, query: resultQuery };
  if (requestId !== undefined) result.requestId = requestId;
  return result;
}

const REQUIRED_TEXT = ['recommendation_id', 'ad_id', 'product_id', 'product_title', 'click_url', 'exposure_url'] as const;

function toRecommendation(entry: unknown, index: number, status: number, requestId: string | undefined): ServiceRecommendation {
  const bad = (what: string): ServiceResponseError =>
    new ServiceResponseError(`recommendations[${index}] ${what}.`, status, requestId);
  if (!isRecord(entry)) throw bad('is not an object');
  const text: Record<string, string> = {};
  for (const name of REQUIRED_TEXT) {
    const value = stringField(entry, name);
    if (value === undefined) throw bad(`has no ${name}`);
    text[name] = value;
  }
  const score = entry.contextual_relevance_score;
  if (typeof score !== 'number' || !isFinite(score) || score < 0 || score > 100) {
    throw bad('has no contextual_relevance_score between 0 and 100');
  }
  const creative = entry.creative_input === undefined || entry.creative_input === null ? {} : entry.creative_input;
  if (!isRecord(creative)) throw bad('has a creative_input that is not an object');
  // Only the SPEC fields are carried over; anything else of the record stays out.
  const recommendation: ServiceRecommendation = {
    recommendation_id: text.recommendation_id,
    ad_id: text.ad_id,
    product_id: text.product_id,
    product_title: text.product_title,
    click_url: text.click_url,
    exposure_url: text.exposure_url,
    creative_input: creative as ServiceCreativeInput,
    contextual_relevance_score: score,
  };
  const weave = stringField(entry, 'weave_summary');
  if (weave !== undefined) recommendation.weave_summary = weave;
  const tail = stringField(entry, 'tail_summary');
  if (tail !== undefined) recommendation.tail_summary = tail;
  return recommendation;
}
