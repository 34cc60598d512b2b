import { SERIES_FIGURES, type ReportSeries } from '#libs/contracts';

/** The header line of a series as CSV (DESIGN §7). */
export const SERIES_CSV_HEADER = ['bucket_start', 'bucket_end', ...SERIES_FIGURES].join(',');

/**
 * A series as CSV (DESIGN §7, RFC 4180): the header line, then one line per bucket with its UTC
 * start and end and its five figures; every line ends with CRLF. No field can hold a comma, a
 * quote or a line break (ISO timestamps and integers), so none is quoted.
 */
export function seriesCsv(series: Pick<ReportSeries, 'buckets'>): string {
  const lines = [SERIES_CSV_HEADER];
  for (const bucket of series.buckets) lines.push([bucket.start_at, bucket.end_at, ...SERIES_FIGURES.map((name) => String(bucket[name]))].join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** `<agent_id>-<time_range>-<granularity>.csv`; agent ids hold only letters, digits and `_ . : -`, so it needs no escaping. */
export function seriesCsvFilename(series: Pick<ReportSeries, 'agent_id' | 'time_range' | 'granularity'>): string {
  return `${series.agent_id}-${series.time_range}-${series.granularity}.csv`;
}
