import { isIanaTimezone } from '#libs/contracts';

export type OnboardingBodyResult = { ok: true; reporting_timezone: string } | { ok: false; detail: string };

const EXAMPLE = 'Send {"reporting_timezone": "<IANA time zone name>"}, e.g. {"reporting_timezone": "Asia/Kathmandu"}.';

/** Whether a Content-Type header names JSON (application/json, optionally with a UTF-8 charset). */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || /^charset="?utf-8"?$/.test(p));
}

/**
 * The body of PATCH /agent/update-onboarding (DESIGN §5): exactly `{reporting_timezone}`, a
 * string naming an IANA zone or link. Unknown fields, a missing or non-string value, offsets
 * (`+05:00`) and unknown names (`Mars/Base`) are refused.
 */
export function parseOnboardingBody(body: unknown): OnboardingBodyResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, detail: `The body must be a JSON object. ${EXAMPLE}` };
  }
  const unknown = Object.keys(body).filter((k) => k !== 'reporting_timezone');
  if (unknown.length > 0) {
    const names = unknown.slice(0, 5).map((k) => `"${k.slice(0, 64)}"`).join(', ');
    return { ok: false, detail: `Unsupported field${unknown.length > 1 ? 's' : ''} ${names}: reporting_timezone is the only field.` };
  }
  if (!Object.prototype.hasOwnProperty.call(body, 'reporting_timezone')) {
    return { ok: false, detail: `reporting_timezone is required. ${EXAMPLE}` };
  }
  const value = (body as { reporting_timezone: unknown }).reporting_timezone;
  if (typeof value !== 'string') return { ok: false, detail: `reporting_timezone must be a string. ${EXAMPLE}` };
  if (!isIanaTimezone(value)) {
    return {
      ok: false,
      detail: `"${value.slice(0, 64)}" is not an IANA time zone name. Use a tz database name such as "America/New_York" or "UTC"; offsets like "+05:00" are not accepted.`,
    };
  }
  return { ok: true, reporting_timezone: value };
}
