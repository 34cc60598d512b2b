import { RECOMMEND_MAX_LATENCY_BUDGET_MS, RECOMMEND_MIN_LATENCY_BUDGET_MS, TRAFFICS } from '#libs/contracts';
import { RECOMMEND_REQUEST_LIMITS } from './recommendations.validation.js';

// Hot-path pre-checks of the body of POST /agent/recommend and of the request of
// recommendations.v1.recommend (see fast-validation.ts): each accepts only what its DTO accepts
// with whitelist + forbidNonWhitelisted (a property test holds them to that); when one says no,
// class-validator decides and gives the reason. Lengths are counted in UTF-16 units, which never
// exceed class-validator's count (a surrogate pair is one character there). The limits are read
// inside the functions: this module and the DTOs' module import each other.

type Payload = Record<string, unknown>;

function isPlainObject(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Required, not blank, at most `max` long (RequiredText). */
const isRequiredText = (value: unknown, max: number) => typeof value === 'string' && value.length <= max && value.trim() !== '';
/** Absent, or a string of at most `max` (OptionalText). */
const isOptionalText = (value: unknown, max: number) => value === undefined || (typeof value === 'string' && value.length <= max);
const isId = (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= 200;
const COUNTRY = /^[A-Za-z]{2}$/;
const MESSAGE_KEYS = ['role', 'content', 'id'];

function isLocale(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'string' || value.length > RECOMMEND_REQUEST_LIMITS.localeLength) return false;
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

function isMessage(value: unknown): boolean {
  const limits = RECOMMEND_REQUEST_LIMITS;
  if (!isPlainObject(value)) return false;
  for (const key in value) if (!MESSAGE_KEYS.includes(key)) return false;
  return (
    isRequiredText(value.role, limits.messageRoleLength) &&
    typeof value.content === 'string' &&
    value.content.length <= limits.messageContentLength &&
    isOptionalText(value.id, limits.idLength)
  );
}

/** The fields both shapes share (all but latency_budget_ms and what the gateway adds). */
function hasValidBodyFields(value: Payload): boolean {
  const limits = RECOMMEND_REQUEST_LIMITS;
  const messages = value.messages;
  return (
    isRequiredText(value.session_id, limits.idLength) &&
    isRequiredText(value.message_id, limits.idLength) &&
    isRequiredText(value.query, limits.queryLength) &&
    (messages === undefined || (Array.isArray(messages) && messages.length <= limits.messages && messages.every(isMessage))) &&
    isLocale(value.locale) &&
    (value.geo === undefined || (typeof value.geo === 'string' && COUNTRY.test(value.geo))) &&
    isOptionalText(value.user_id, limits.optionalTextLength) &&
    isOptionalText(value.model, limits.optionalTextLength) &&
    isOptionalText(value.platform_id, limits.optionalTextLength) &&
    isOptionalText(value.platform_surface, limits.optionalTextLength)
  );
}

const BODY_KEYS = ['session_id', 'message_id', 'query', 'latency_budget_ms', 'messages', 'locale', 'geo', 'user_id', 'model', 'platform_id', 'platform_surface'];
const REQUEST_KEYS = [...BODY_KEYS, 'agent_id', 'traffic', 'request_id'];

function hasOnlyKeys(value: Payload, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false;
  return Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null;
}

/**
 * The body of POST /agent/recommend, when its latency budget is absent or already the effective
 * one (a whole number of milliseconds within the served range, which the DTO's clamping leaves
 * as it is); any other budget goes through class-validator and its transformation.
 */
export function passesRecommendHttpBodyFastCheck(value: unknown): boolean {
  if (!isPlainObject(value) || !hasOnlyKeys(value, BODY_KEYS)) return false;
  const budget = value.latency_budget_ms;
  return (
    (budget === undefined ||
      (typeof budget === 'number' && Number.isInteger(budget) && budget >= RECOMMEND_MIN_LATENCY_BUDGET_MS && budget <= RECOMMEND_MAX_LATENCY_BUDGET_MS)) &&
    hasValidBodyFields(value)
  );
}

/** The request of recommendations.v1.recommend (the body as the gateway forwards it, plus platform, traffic and request id). */
export function passesRecommendRequestFastCheck(value: unknown): boolean {
  if (!isPlainObject(value) || !hasOnlyKeys(value, REQUEST_KEYS)) return false;
  const budget = value.latency_budget_ms;
  return (
    typeof budget === 'number' &&
    Number.isInteger(budget) &&
    budget >= 1 &&
    budget <= 600000 &&
    isId(value.agent_id) &&
    (TRAFFICS as readonly unknown[]).includes(value.traffic) &&
    isId(value.request_id) &&
    hasValidBodyFields(value)
  );
}
