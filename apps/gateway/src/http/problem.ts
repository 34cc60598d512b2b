import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';

/** Base of the stable problem type URIs (RFC 9457 §3.1.1). */
export const PROBLEM_TYPE_BASE = 'https://docs.weave.example/problems/';

/** The problem types the gateway answers with: slug → status and title (the first of a status is its generic one). */
export const PROBLEM_TYPES = {
  'bad-request': { status: 400, title: 'Bad request' },
  'invalid-api-key': { status: 401, title: 'Invalid or missing API key' },
  'invalid-id-token': { status: 401, title: 'Invalid or missing ID token' },
  'account-unavailable': { status: 403, title: 'Platform account unavailable' },
  'not-found': { status: 404, title: 'Not found' },
  'statement-not-found': { status: 404, title: 'Payout statement not found' },
  'key-not-found': { status: 404, title: 'API key not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'key-limit-reached': { status: 409, title: 'Too many API keys' },
  'payload-too-large': { status: 413, title: 'Request body too large' },
  'uri-too-long': { status: 414, title: 'Request URI too long' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'invalid-query': { status: 422, title: 'Invalid query parameters' },
  'invalid-body': { status: 422, title: 'Invalid request body' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'request-header-fields-too-large': { status: 431, title: 'Request headers too large' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'service-unavailable': { status: 503, title: 'Service temporarily unavailable' },
  'reporting-unavailable': { status: 503, title: 'Reporting temporarily unavailable' },
  'settings-unavailable': { status: 503, title: 'Settings temporarily unavailable' },
  'payouts-unavailable': { status: 503, title: 'Payouts temporarily unavailable' },
} as const;
export type ProblemSlug = keyof typeof PROBLEM_TYPES;

const SLUG_BY_STATUS = new Map<number, ProblemSlug>();
for (const [slug, { status }] of Object.entries(PROBLEM_TYPES) as [ProblemSlug, { status: number }][]) {
  if (!SLUG_BY_STATUS.has(status)) SLUG_BY_STATUS.set(status, slug);
}

/** RFC 9457 problem details, as the gateway sends them. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
}

export function problemType(slug: ProblemSlug): string {
  return `${PROBLEM_TYPE_BASE}${slug}`;
}

/** The problem for a status that has no specific type: the generic one, else `about:blank`. */
export function problemForStatus(status: number, detail: string): ProblemDetails {
  const slug = SLUG_BY_STATUS.get(status);
  if (slug) return { type: problemType(slug), title: PROBLEM_TYPES[slug].title, status, detail };
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
}

/** Thrown by the gateway's own code: the filter answers it exactly as described. */
export class ProblemException extends HttpException {
  readonly problem: ProblemDetails;

  constructor(
    slug: ProblemSlug,
    detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    const { status, title } = PROBLEM_TYPES[slug];
    super(detail, status);
    this.problem = { type: problemType(slug), title, status, detail };
  }
}
