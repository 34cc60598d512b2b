import { DEFAULT_TIME_RANGE, TIME_RANGES, type TimeRange } from '#libs/contracts';

export type ReportingQueryResult = { ok: true; time_range: TimeRange } | { ok: false; detail: string };

const ALLOWED = `Allowed values of time_range: ${TIME_RANGES.join(', ')}.`;

function decode(component: string): string | null {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * Validates the raw query string of GET /agent/reporting (SPEC: time_range is the only
 * supported parameter). Works on the raw URL rather than a parsed object so that a repeated
 * parameter, an empty value or a parameter without `=` cannot hide in a parser's choices.
 * Names and values are percent-decoded (application/x-www-form-urlencoded rules); empty
 * `&&` segments carry no parameter and are ignored, as URLSearchParams does.
 */
export function parseReportingQuery(rawUrl: string): ReportingQueryResult {
  const mark = rawUrl.indexOf('?');
  if (mark < 0) return { ok: true, time_range: DEFAULT_TIME_RANGE };
  const hash = rawUrl.indexOf('#', mark);
  const query = rawUrl.slice(mark + 1, hash < 0 ? undefined : hash);

  let timeRange: string | undefined;
  for (const segment of query.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const name = decode(eq < 0 ? segment : segment.slice(0, eq));
    const value = eq < 0 ? '' : decode(segment.slice(eq + 1));
    if (name === null || value === null) return { ok: false, detail: 'The query string is not valid percent-encoding.' };
    if (name !== 'time_range') {
      return { ok: false, detail: `Unsupported query parameter "${name.slice(0, 64)}": time_range is the only supported parameter.` };
    }
    if (timeRange !== undefined) return { ok: false, detail: 'time_range must be given at most once.' };
    if (value === '') return { ok: false, detail: `time_range must not be empty. ${ALLOWED}` };
    timeRange = value;
  }
  if (timeRange === undefined) return { ok: true, time_range: DEFAULT_TIME_RANGE };
  if (!(TIME_RANGES as readonly string[]).includes(timeRange)) {
    return { ok: false, detail: `Unsupported time_range "${timeRange.slice(0, 64)}". ${ALLOWED}` };
  }
  return { ok: true, time_range: timeRange as TimeRange };
}
