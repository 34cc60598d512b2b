import {
  RECOMMEND_DEFAULT_LATENCY_BUDGET_MS,
  RECOMMEND_MAX_LATENCY_BUDGET_MS,
  RECOMMEND_MIN_LATENCY_BUDGET_MS,
  type RecommendConversationMessage,
  type RecommendHttpBody,
} from '#libs/contracts';

/** Limits of POST /agent/recommend bodies (SPEC leaves them open; these are ours). */
export const RECOMMEND_LIMITS = {
  /** session_id, message_id, user_id, model, platform_id, platform_surface, messages[].id. */
  idLength: 200,
  queryLength: 2000,
  messages: 50,
  messageRoleLength: 50,
  messageContentLength: 8000,
  localeLength: 35,
} as const;

/** The validated body, with the latency budget defaulted and clamped. */
export type ParsedRecommendBody = RecommendHttpBody & { latency_budget_ms: number };
export type RecommendBodyResult = { ok: true; body: ParsedRecommendBody } | { ok: false; detail: string };

const REQUIRED_TEXT = ['session_id', 'message_id', 'query'] as const;
const OPTIONAL_TEXT = ['user_id', 'model', 'platform_id', 'platform_surface'] as const;
const FIELDS = new Set<string>([...REQUIRED_TEXT, ...OPTIONAL_TEXT, 'latency_budget_ms', 'messages', 'locale', 'geo']);
const MESSAGE_FIELDS = new Set(['role', 'content', 'id']);
const EXAMPLE = 'Send {"session_id": "…", "message_id": "…", "query": "…"} with the optional fields of the API reference.';

class Invalid extends Error {}

const quote = (name: string) => `"${name.slice(0, 64)}"`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownFields(record: Record<string, unknown>, allowed: Set<string>, where: string): void {
  const unknown = Object.keys(record).filter((k) => !allowed.has(k));
  if (unknown.length > 0) {
    throw new Invalid(`Unsupported field${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 5).map(quote).join(', ')}${where}.`);
  }
}

function text(value: unknown, name: string, max: number, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (value === undefined) throw new Invalid(`${name} is required. ${EXAMPLE}`);
  if (typeof value !== 'string') throw new Invalid(`${name} must be a string.`);
  if (required && value.trim() === '') throw new Invalid(`${name} must not be empty.`);
  if (value.length > max) throw new Invalid(`${name} must be at most ${max} characters.`);
  return value;
}

function latencyBudget(value: unknown): number {
  if (value === undefined) return RECOMMEND_DEFAULT_LATENCY_BUDGET_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new Invalid('latency_budget_ms must be a positive number of milliseconds.');
  }
  // Out-of-range budgets are not the caller's error: they are brought into the served range.
  return Math.round(Math.min(RECOMMEND_MAX_LATENCY_BUDGET_MS, Math.max(RECOMMEND_MIN_LATENCY_BUDGET_MS, value)));
}

function messages(value: unknown): RecommendConversationMessage[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new Invalid('messages must be an array of {role, content, id?} objects.');
  if (value.length > RECOMMEND_LIMITS.messages) throw new Invalid(`messages must have at most ${RECOMMEND_LIMITS.messages} entries.`);
  return value.map((entry: unknown, index) => {
    const at = `messages[${index}]`;
    if (!isObject(entry)) throw new Invalid(`${at} must be an object with role and content.`);
    unknownFields(entry, MESSAGE_FIELDS, ` in ${at}: role, content and id are its only fields`);
    const role = text(entry.role, `${at}.role`, RECOMMEND_LIMITS.messageRoleLength, true)!;
    if (entry.content === undefined) throw new Invalid(`${at}.content is required.`);
    const content = text(entry.content, `${at}.content`, RECOMMEND_LIMITS.messageContentLength, false)!;
    const id = text(entry.id, `${at}.id`, RECOMMEND_LIMITS.idLength, false);
    return id === undefined ? { role, content } : { role, content, id };
  });
}

function locale(value: unknown): string | undefined {
  const tag = text(value, 'locale', RECOMMEND_LIMITS.localeLength, false);
  if (tag === undefined) return undefined;
  try {
    if (Intl.getCanonicalLocales(tag).length === 1) return tag;
  } catch {
    // not a BCP 47 tag
  }
  throw new Invalid(`locale must be a BCP 47 language tag such as "en-US" (got ${quote(tag)}).`);
}

function geo(value: unknown): string | undefined {
  const code = text(value, 'geo', 2, false);
  if (code === undefined) return undefined;
  if (!/^[A-Za-z]{2}$/.test(code)) throw new Invalid(`geo must be an ISO 3166-1 alpha-2 country code such as "US" (got ${quote(code)}).`);
  return code;
}

/**
 * The body of POST /agent/recommend (RecommendHttpBody, what @vendor/weave-node sends):
 * required non-empty session_id, message_id and query; optional fields typed and bounded;
 * unknown fields refused. The latency budget defaults to RECOMMEND_DEFAULT_LATENCY_BUDGET_MS and
 * is clamped to the served range.
 */
export function parseRecommendBody(raw: unknown): RecommendBodyResult {
  try {
    if (!isObject(raw)) throw new Invalid(`The body must be a JSON object. ${EXAMPLE}`);
    unknownFields(raw, FIELDS, '');
    const body: ParsedRecommendBody = {
      session_id: text(raw.session_id, 'session_id', RECOMMEND_LIMITS.idLength, true)!,
      message_id: text(raw.message_id, 'message_id', RECOMMEND_LIMITS.idLength, true)!,
      query: text(raw.query, 'query', RECOMMEND_LIMITS.queryLength, true)!,
      latency_budget_ms: latencyBudget(raw.latency_budget_ms),
    };
    const history = messages(raw.messages);
    if (history !== undefined) body.messages = history;
    const tag = locale(raw.locale);
    if (tag !== undefined) body.locale = tag;
    const country = geo(raw.geo);
    if (country !== undefined) body.geo = country;
    for (const name of OPTIONAL_TEXT) {
      const value = text(raw[name], name, RECOMMEND_LIMITS.idLength, false);
      if (value !== undefined) body[name] = value;
    }
    return { ok: true, body };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, detail: error.message };
    throw error;
  }
}
