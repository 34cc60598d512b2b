import { DateTime, IANAZone } from 'luxon';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

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

function zoneOf(timezone: string): IANAZone {
  if (!isIanaTimezone(timezone)) throw new RangeError(`not an IANA time zone: ${JSON.stringify(timezone)}`);
  return IANAZone.create(timezone);
}

/**
 * The first instant of the local calendar date that contains `instant` in `timezone`.
 *
 * Usually that is local midnight. When midnight occurs twice (a fall-back transition at
 * 01:00, e.g. America/Havana 2013-11-03) it is the earlier one; when midnight is skipped
 * (a spring-forward at 00:00, e.g. America/Havana 2013-03-10, America/Santiago 2022-09-11)
 * it is the transition instant, at 01:00 local. All offsets come from luxon; luxon's own
 * `startOf('day')` keeps the current offset and so misses the earlier of two midnights.
 */
export function startOfLocalDay(instant: Date, timezone: string): Date {
  const zone = zoneOf(timezone);
  const at = instant.getTime();
  if (!Number.isFinite(at)) throw new RangeError('instant must be a valid Date');
  const local = DateTime.fromMillis(at, { zone });
  const localDate = local.toISODate();
  // Local midnight of that date read as if it were UTC: the wall clock we look for.
  const midnightWall = DateTime.fromObject(
    { year: local.year, month: local.month, day: local.day },
    { zone: 'utc' },
  ).toMillis();

  // Every offset in force within two days of that midnight (transitions are never closer
  // than a few hours apart, so sampling every hour sees each one).
  const offsetsMs = new Set<number>();
  for (let hours = -48; hours <= 48; hours++) {
    offsetsMs.add(zone.offset(midnightWall + hours * HOUR_MS) * MINUTE_MS);
  }

  // Local midnight exists for each offset that is actually in force at the instant it names.
  const midnights = [...offsetsMs]
    .map((offsetMs) => midnightWall - offsetMs)
    .filter((candidate) => zone.offset(candidate) * MINUTE_MS === midnightWall - candidate)
    .filter((candidate) => candidate <= at);
  if (midnights.length > 0) return new Date(Math.min(...midnights));

  // Midnight was skipped: the date begins at the transition out of the previous date.
  const isOnOrAfterDate = (t: number) => (DateTime.fromMillis(t, { zone }).toISODate() ?? '') >= (localDate ?? '');
  let low = midnightWall - Math.max(...offsetsMs); // still on the previous date
  let high = Math.min(at, midnightWall - Math.min(...offsetsMs)); // already on the date
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    if (isOnOrAfterDate(middle)) high = middle;
    else low = middle;
  }
  return new Date(high);
}
