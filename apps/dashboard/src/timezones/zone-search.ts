import { isIanaTimezone } from '#libs/timezones';

/**
 * The zones a person can pick: the browser's list (Intl.supportedValuesOf('timeZone')) plus
 * UTC (which that list leaves out), plus `extra` names (the platform's current zone). Browsers
 * list ICU's canonical names, some of them old spellings (Chrome: Asia/Katmandu, Asia/Calcutta);
 * a name typed exactly (Asia/Kathmandu) is offered too when it is a valid IANA name.
 */
export function knownZones(supported: readonly string[], extra: readonly (string | null | undefined)[] = []): string[] {
  const names = new Set<string>(['UTC']);
  for (const name of [...supported, ...extra]) if (name && isIanaTimezone(name)) names.add(name);
  return [...names].sort((a, b) => (a === 'UTC' ? -1 : b === 'UTC' ? 1 : a.localeCompare(b)));
}

const normalize = (text: string) => text.toLowerCase().replace(/[_\s]+/g, ' ').trim();

/** Zones matching a search ("kath", "new york", "asia/ka"); the typed name itself when it is a valid zone not in the list. */
export function searchZones(zones: readonly string[], query: string, limit = 500): string[] {
  const wanted = normalize(query);
  const matches = wanted === '' ? [...zones] : zones.filter((zone) => normalize(zone).includes(wanted));
  const typed = query.trim();
  if (typed !== '' && !zones.includes(typed) && isIanaTimezone(typed)) matches.unshift(typed);
  return matches.slice(0, limit);
}
