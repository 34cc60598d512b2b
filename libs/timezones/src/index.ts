import { IANAZone } from 'luxon';

/**
 * Whether `name` is an IANA time zone name (a zone or a link) known to the runtime.
 * Offsets (`+05:00`, `UTC+1`), blank or padded strings, unknown names (`Mars/Base`) and
 * non-strings are not. `UTC` and `Etc/UTC` are tz database names and are accepted.
 * Names are case-sensitive as in the tz database (every path segment starts with a capital
 * letter), so `asia/kathmandu` is rejected although Intl would resolve it.
 * One rule for the gateway, timezone-settings and reporting-projection.
 */
export function isIanaTimezone(name: unknown): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > 100) return false;
  // Newer engines accept offset time zones in Intl; they are not tz database names.
  if (!/^[A-Z][A-Za-z0-9_+-]*(\/[A-Z][A-Za-z0-9_+-]*)*$/.test(name)) return false;
  if (/^(UTC|GMT)[+-]/.test(name)) return false;
  if (!IANAZone.isValidZone(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
