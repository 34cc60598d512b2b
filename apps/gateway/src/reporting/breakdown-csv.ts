import { SERIES_FIGURES, type ReportBreakdown } from '#libs/contracts';

/** The header line of a breakdown as CSV (DESIGN §9). */
export const BREAKDOWN_CSV_HEADER = ['id', ...SERIES_FIGURES].join(',');

/** The id of the last line, which holds `other`. */
export const OTHER_CSV_ID = '(other)';

/** An RFC 4180 field: quoted (quotes doubled) when it holds a comma, a quote or a line break. */
function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A breakdown as CSV (DESIGN §9, RFC 4180): the header line, one line per row (the unattributed
 * row with an empty id), then `other` with id `(other)`; every line ends with CRLF.
 */
export function breakdownCsv(breakdown: Pick<ReportBreakdown, 'rows' | 'other'>): string {
  const lines = [BREAKDOWN_CSV_HEADER];
  for (const row of breakdown.rows) lines.push([field(row.id ?? ''), ...SERIES_FIGURES.map((name) => String(row[name]))].join(','));
  lines.push([OTHER_CSV_ID, ...SERIES_FIGURES.map((name) => String(breakdown.other[name]))].join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** `<agent_id>-<time_range>-by-<by>.csv`; agent ids hold only letters, digits and `_ . : -`, so it needs no escaping. */
export function breakdownCsvFilename(breakdown: Pick<ReportBreakdown, 'agent_id' | 'time_range' | 'by'>): string {
  return `${breakdown.agent_id}-${breakdown.time_range}-by-${breakdown.by}.csv`;
}
