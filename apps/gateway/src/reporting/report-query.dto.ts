import { DEFAULT_TIME_RANGE, FastCheck, TIME_RANGES, type TimeRange } from '#libs/contracts';
import { TimeRangeParameter } from './series-query.dto.js';

/** The query of the hot path: no parameter, or a valid time_range alone (accepts only what the DTO accepts). */
export function passesReportQueryFastCheck(query: unknown): boolean {
  if (typeof query !== 'object' || query === null) return false;
  const keys = Object.keys(query);
  return keys.length === 0 || (keys.length === 1 && keys[0] === 'time_range' && (TIME_RANGES as readonly unknown[]).includes((query as { time_range: unknown }).time_range));
}

/** The query of GET /agent/reporting (SPEC: time_range is the only supported parameter). */
@FastCheck(passesReportQueryFastCheck)
export class ReportQueryDto {
  @TimeRangeParameter(
    'The period: today (from midnight in the platform reporting timezone), 1d/7d/30d/90d (rolling UTC windows ending at the last completed reporting minute) or all. The only supported query parameter.',
  )
  time_range: TimeRange = DEFAULT_TIME_RANGE;
}
