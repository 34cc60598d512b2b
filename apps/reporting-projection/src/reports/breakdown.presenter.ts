import type { BreakdownSort, ReportBreakdown } from '#libs/contracts';
import { BREAKDOWN_FIGURES } from '../ingestion/breakdown-deltas.js';
import type { BreakdownSnapshot } from '../publication/breakdown-snapshot.js';
import { presentSplit } from './split.presenter.js';

/**
 * The breakdown of DESIGN §9 from a stored snapshot: the first `limit` rows of the sort key's
 * list (already in the served order), and `other` = the period's totals − those rows. The status
 * is decided at read time.
 */
export function presentBreakdown(snapshot: BreakdownSnapshot, status: ReportBreakdown['status'], sort: BreakdownSort, limit: number): ReportBreakdown {
  const rows = snapshot.tops[sort].slice(0, limit);
  const other = { ...snapshot.totals };
  for (const row of rows) for (const name of BREAKDOWN_FIGURES) other[name] -= row[name];
  return presentSplit(snapshot, status, { by: snapshot.by }, { rows, other });
}
