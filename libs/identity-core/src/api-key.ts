import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Platform API keys (DESIGN §3): `sk_live_` / `sk_test_` followed by random base62 characters.
 * Only the SHA-256 of the whole secret is stored. Everything here is pure (no I/O) so that the
 * gateway, the ops CLI and the unit tests share one definition of the format.
 */
export const KEY_MODES = ['live', 'test'] as const;
export type KeyMode = (typeof KEY_MODES)[number];

export const API_KEY_PREFIXES: Record<KeyMode, string> = { live: 'sk_live_', test: 'sk_test_' };
/** Random characters in a generated secret (DESIGN asks for at least 32). */
export const API_KEY_RANDOM_LENGTH = 40;
/** Random characters in a key id (`key_…`), which is not secret. */
export const KEY_ID_RANDOM_LENGTH = 20;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Accept any length DESIGN allows (≥ 32) up to a sane bound, so a future longer format still
// parses; everything outside this shape is rejected before any database lookup.
const API_KEY_PATTERN = /^sk_(live|test)_([0-9A-Za-z]{32,128})$/;
const KEY_ID_PATTERN = /^key_[0-9A-Za-z]{20}$/;
// Three base64url segments separated by dots: the compact serialization of a JWS (an ID token).
const JWT_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Uniformly random base62 string. Bytes ≥ 248 (= 4 × 62) are rejected instead of reduced
 * modulo 62, which would favour the first characters of the alphabet.
 */
export function randomBase62(length: number, random: (size: number) => Buffer = randomBytes): string {
  const limit = 256 - (256 % BASE62.length); // 248
  let out = '';
  while (out.length < length) {
    for (const byte of random(Math.max(16, Math.ceil((length - out.length) * 1.1)))) {
      if (byte >= limit) continue;
      out += BASE62[byte % BASE62.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateApiKey(mode: KeyMode): string {
  return `${API_KEY_PREFIXES[mode]}${randomBase62(API_KEY_RANDOM_LENGTH)}`;
}

export function generateKeyId(): string {
  return `key_${randomBase62(KEY_ID_RANDOM_LENGTH)}`;
}

/**
 * SHA-256 of the full secret (prefix included): what the database stores. The one-shot
 * `crypto.hash` (no Hash object per call): it runs for every request with an API key.
 */
export function hashApiKey(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** The same hash as base64 text in one call (a cache key: the gateway's key lookups, per request). */
export function hashApiKeyBase64(secret: string): string {
  return hash('sha256', secret, 'base64');
}

/** Constant-time comparison of two hashes (false on different lengths). */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The mode of a well-formed API key, or null when the string is not one. */
export function parseApiKey(secret: string): { mode: KeyMode } | null {
  const match = API_KEY_PATTERN.exec(secret);
  return match ? { mode: match[1] as KeyMode } : null;
}

export function isValidKeyId(keyId: string): boolean {
  return KEY_ID_PATTERN.test(keyId);
}

export function looksLikeJwt(token: string): boolean {
  return JWT_PATTERN.test(token);
}

export type BearerFailure = 'missing' | 'not_bearer' | 'empty' | 'id_token' | 'malformed';

export type BearerResult = { ok: true; apiKey: string; mode: KeyMode } | { ok: false; reason: BearerFailure };

/**
 * Reads `Authorization: Bearer <API_KEY>` (RFC 6750 §2.1: the scheme is case-insensitive, one
 * or more spaces, then the token). Only the shape is checked here; whether the key exists is
 * the repository's business.
 */
export function parseBearer(header: string | string[] | undefined): BearerResult {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return { ok: false, reason: 'missing' };
  const match = /^([A-Za-z]+)(?: +(.*))?$/s.exec(value.trim());
  if (!match || match[1].toLowerCase() !== 'bearer') return { ok: false, reason: 'not_bearer' };
  const token = (match[2] ?? '').trim();
  if (token === '') return { ok: false, reason: 'empty' };
  if (looksLikeJwt(token)) return { ok: false, reason: 'id_token' };
  const parsed = parseApiKey(token);
  if (!parsed) return { ok: false, reason: 'malformed' };
  return { ok: true, apiKey: token, mode: parsed.mode };
}

/** Characters of a key name (DESIGN §7: 1–64), counted as Unicode code points like PostgreSQL's char_length. */
export const KEY_NAME_MAX_LENGTH = 64;
/**
 * Characters a key name may not hold: control characters (C0, DEL, C1, which also keeps NUL out
 * of PostgreSQL), line and paragraph separators, and the bidirectional overrides and isolates
 * that can make a name display as another one.
 */
const KEY_NAME_FORBIDDEN = /[\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]/u;

/** Why `name` cannot name a key, or undefined when it can. The one rule for the gateway's DTO and the repository. */
export function keyNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'name must be a string';
  // A lone surrogate (JSON allows "\ud800") is no character: PostgreSQL could not store it.
  if (/\p{Cs}/u.test(name)) return 'name must be valid Unicode text';
  const length = [...name].length;
  if (length === 0 || name.trim() === '') return `name must be 1–${KEY_NAME_MAX_LENGTH} characters and not blank`;
  if (length > KEY_NAME_MAX_LENGTH) return `name must be at most ${KEY_NAME_MAX_LENGTH} characters; got ${length}`;
  if (KEY_NAME_FORBIDDEN.test(name)) return 'name must not contain control characters, line breaks or bidirectional overrides';
  return undefined;
}

/** The last four characters of a secret, which the key list shows (never more of it). */
export function lastFour(secret: string): string {
  return secret.slice(-4);
}
