import { createHmac, timingSafeEqual } from 'node:crypto';
import { TRAFFICS, isUtcTimestamp, type Traffic, type TrackingClaims } from '#libs/contracts';

/**
 * Tracking tokens (the `t` of `exposure_url` and `click_url`).
 *
 * Wire format: `<payload>.<signature>` where
 *   payload   = base64url(UTF-8 JSON of the claims below), no padding
 *   signature = base64url(HMAC-SHA256(TRACKING_SIGNING_SECRET, payload)), no padding (43 chars)
 * The HMAC covers the payload exactly as it appears in the URL, so the claims are decoded only
 * after the signature has been checked (in constant time, crypto.timingSafeEqual), and the
 * signature must be the canonical encoding: a re-encoded or altered token is refused.
 *
 * Claims: the contract's TrackingClaims (what the events need: recommendation, platform,
 * traffic, creation time, ad, product), plus `v` (format version, 1), `kind` (the route the
 * token is for: an exposure token does not count as a click), `exp` (when the link stops
 * recording, seconds since the epoch: signing time + TRACKING_LINK_TTL_DAYS) and, for clicks,
 * `landing_url` (where the click redirects: signed, so a link cannot be turned into an open
 * redirect). An expired token still verifies — the link keeps answering as the user expects —
 * but records nothing (TrackingService). Tokens signed before `exp` existed (issue 12) have
 * none: they expire TRACKING_LINK_TTL_DAYS after their recommendation_created_at.
 */
export const TRACKING_TOKEN_VERSION = 1;
export const TRACKING_KINDS = ['shown', 'clicked'] as const;
export type TrackingKind = (typeof TRACKING_KINDS)[number];

export interface SignedTrackingClaims extends TrackingClaims {
  v: typeof TRACKING_TOKEN_VERSION;
  kind: TrackingKind;
  /** Seconds since the epoch after which the link records nothing; absent in tokens signed before issue 12. */
  exp?: number;
  /** Click tokens only: the ad's landing page (http or https). */
  landing_url?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The `exp` of a link signed at `now` under TRACKING_LINK_TTL_DAYS. */
export function trackingExpiry(now: Date, ttlDays: number): number {
  return Math.floor((now.getTime() + ttlDays * DAY_MS) / 1000);
}

/**
 * When a link stops recording, in ms since the epoch: its `exp`, or for a token signed before
 * `exp` existed, its recommendation's creation time + TRACKING_LINK_TTL_DAYS (such a token was
 * signed when the recommendation was made, so its age is the recommendation's).
 */
export function trackingLinkExpiresAt(claims: SignedTrackingClaims, ttlDays: number): number {
  return claims.exp !== undefined ? claims.exp * 1000 : Date.parse(claims.recommendation_created_at) + ttlDays * DAY_MS;
}

/** Longest token accepted before any work is done (a real one is well under 2 KB). */
export const MAX_TOKEN_LENGTH = 4096;
/** Longest landing URL the gateway signs into a click token. */
export const MAX_LANDING_URL_LENGTH = 2048;
const MAX_ID_LENGTH = 200;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The payload is base64url (ASCII): read as latin1, the same bytes as UTF-8 without the UTF-8 encoder. */
function mac(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload, 'latin1').digest('base64url');
}

/** A token of the claims' JSON text. */
function tokenOf(json: string, secret: string): string {
  const payload = Buffer.from(json, 'utf8').toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

export function signTrackingToken(claims: SignedTrackingClaims, secret: string): string {
  return tokenOf(JSON.stringify(claims), secret);
}

/** What a recommendation's two tokens say beyond the answer's platform, traffic and expiry. */
export interface TrackedRecommendation {
  recommendation_id: string;
  created_at: string;
  ad_id: string;
  product_id: string;
  landing_url: string;
}

/**
 * The exposure and click tokens of one answer's recommendations, all for one platform and
 * traffic and with one `exp`: the claims' JSON is written from fragments, the answer's built
 * once, each value by JSON.stringify and the keys in the order signTrackingToken's claims have
 * them (`v`, ids, `exp`, `kind`, `landing_url`). The tokens are byte for byte those of
 * signTrackingToken for the same claims (a unit test holds them equal); what saves the CPU is
 * one expiry and one platform fragment per answer and no claims objects per token.
 */
export function answerTokenSigner(
  agentId: string,
  traffic: Traffic,
  exp: number,
  secret: string,
): (recommendation: TrackedRecommendation) => { shown: string; clicked: string } {
  if (!Number.isSafeInteger(exp)) throw new RangeError(`exp must be a whole number of seconds (got ${exp})`);
  const platform = `,"agent_id":${JSON.stringify(agentId)},"traffic":${JSON.stringify(traffic)},"recommendation_created_at":`;
  const expiry = `,"exp":${exp},"kind":"`;
  return (r) => {
    const common =
      `{"v":${TRACKING_TOKEN_VERSION},"recommendation_id":${JSON.stringify(r.recommendation_id)}${platform}${JSON.stringify(r.created_at)}` +
      `,"ad_id":${JSON.stringify(r.ad_id)},"product_id":${JSON.stringify(r.product_id)}${expiry}`;
    return {
      shown: tokenOf(`${common}shown"}`, secret),
      clicked: tokenOf(`${common}clicked","landing_url":${JSON.stringify(r.landing_url)}}`, secret),
    };
  };
}

/** Whether a URL may be a landing page: absolute http(s), no credentials, bounded length. */
export function isLandingUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LANDING_URL_LENGTH) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

/** The claims of a decoded payload when they have exactly the expected shape for `kind`. */
function claimsOf(value: unknown, kind: TrackingKind): SignedTrackingClaims | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const c = value as Record<string, unknown>;
  if (c.v !== TRACKING_TOKEN_VERSION || c.kind !== kind) return null;
  if (!isId(c.recommendation_id) || !isId(c.agent_id) || !isId(c.ad_id) || !isId(c.product_id)) return null;
  if (!(TRAFFICS as readonly unknown[]).includes(c.traffic)) return null;
  if (!isUtcTimestamp(c.recommendation_created_at)) return null;
  if (c.exp !== undefined && !(Number.isSafeInteger(c.exp) && (c.exp as number) >= 0)) return null;
  if (kind === 'clicked' ? !isLandingUrl(c.landing_url) : c.landing_url !== undefined) return null;
  return c as unknown as SignedTrackingClaims;
}

/**
 * The claims of a token signed with one of `secrets` (the current one, then the previous one
 * during a rotation) for this `kind`; null for anything else: garbage, another secret, an
 * altered payload or signature, a token of the other kind.
 */
export function verifyTrackingToken(token: string, kind: TrackingKind, secrets: readonly string[]): SignedTrackingClaims | null {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
  const payload = token.slice(0, dot);
  const signature = Buffer.from(token.slice(dot + 1), 'latin1');
  if (!BASE64URL.test(payload)) return null;

  let valid = false;
  for (const secret of secrets) {
    const expected = Buffer.from(mac(secret, payload), 'latin1');
    // Lengths are public (always 43 characters); only equal lengths are compared, in constant time.
    if (expected.length === signature.length && timingSafeEqual(expected, signature)) valid = true;
  }
  if (!valid) return null;

  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  return claimsOf(decoded, kind);
}
