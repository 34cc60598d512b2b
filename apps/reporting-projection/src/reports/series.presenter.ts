import type { ReportSeries } from '#libs/contracts';
import type { SeriesSnapshot } from '../publication/series-snapshot.js';
import { presentSplit } from './split.presenter.js';

/** The series of DESIGN §7 from a stored snapshot, with the status decided at read time. */
export function presentSeries(snapshot: SeriesSnapshot, status: ReportSeries['status']): ReportSeries {
  return presentSplit(snapshot, status, { granularity: snapshot.granularity }, { buckets: snapshot.buckets });
}
