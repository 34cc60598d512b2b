/**
 * SQL literals for statements whose arguments are inlined (a whole batch or answer sent as one
 * simple-query message) and array arguments built in one join. The driver's own escaping
 * (`pg.escapeLiteral`, and the array serialiser) concatenates one character or element at a
 * time, which profiles of the ingest and recommend hot paths showed as their largest source of
 * garbage.
 */

/**
 * A string as an SQL literal, as `pg.escapeLiteral` (libpq's escaping) writes it: quotes doubled;
 * with a backslash, an E'' literal with backslashes doubled. Native replacements instead of a
 * concatenation per character.
 */
export function quoteLiteral(value: string): string {
  const quoted = value.includes("'") ? value.replaceAll("'", "''") : value;
  return quoted.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * A PostgreSQL array literal for values that need no quoting (numbers, booleans, ISO
 * timestamps, null), cast by the query (`$1::bigint[]`). Cheaper than the driver's generic
 * per-element escaping on the ingest hot path; text ids still go through the driver.
 */
export function arrayLiteral(values: readonly (number | boolean | string | null)[]): string {
  // Without nulls, one join (PostgreSQL reads `true` and `false` as booleans too).
  if (!values.includes(null)) return `{${values.join(',')}}`;
  return `{${values.map((v) => (v === null ? 'NULL' : v === true ? 't' : v === false ? 'f' : v)).join(',')}}`;
}

/**
 * A PostgreSQL array literal of text values, cast by the query (`$1::text[]`): every element
 * quoted (a quote or backslash in it escaped), null as NULL. The driver's own escaping of a JavaScript array
 * builds the literal by concatenating element after element (several strings per element): in
 * heap profiles of a backfill it was the largest single source of garbage (17 % of the bytes
 * allocated). Ids rarely hold a quote or a backslash, so the common case is one join.
 */
export function textArrayLiteral(values: readonly (string | null | undefined)[]): string {
  if (values.length === 0) return '{}';
  let plain = true;
  for (const value of values) {
    if (value === null || value === undefined || value.includes('"') || value.includes('\\')) {
      plain = false;
      break;
    }
  }
  if (plain) return `{"${values.join('","')}"}`;
  return `{${values.map((v) => (v === null || v === undefined ? 'NULL' : `"${v.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
}

/** A text[] literal quoted for a statement (`${quotedTextArray(ids)}::text[]`). */
export function quotedTextArray(values: readonly string[]): string {
  return quoteLiteral(textArrayLiteral(values));
}
