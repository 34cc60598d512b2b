import { isIanaTimezone } from '#libs/timezones';

/**
 * The zones a person can pick: the browser's list (Intl.supportedValuesOf('timeZone')) plus
 * UTC (which that list leaves out), plus `extra` names (the platform's current zone).
 */
export function knownZones(supported: readonly string[], extra: readonly (string | null | undefined)[] = []): string[] {
  const names = new Set<string>(['UTC']);
  for (const name of [...supported, ...extra]) if (name && isIanaTimezone(name)) names.add(name);
  return [...names].sort((a, b) => (a === 'UTC' ? -1 : b === 'UTC' ? 1 : a.localeCompare(b)));
}

const REGIONS = ['Africa', 'America', 'Antarctica', 'Arctic', 'Asia', 'Atlantic', 'Australia', 'Europe', 'Indian', 'Pacific', 'Etc'];

const normalize = (text: string) => text.toLowerCase().replace(/[_\s]+/g, ' ').trim();

/** "new york" → "New_York", "port-au-prince" → "Port-Au-Prince" (tz names capitalise every word). */
function tzCase(text: string): string {
  return text
    .trim()
    .split(/[\s_]+/)
    .map((word) => word.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase()))
    .join('_');
}

/**
 * Valid IANA names the search text may mean although the list lacks them: browsers list ICU's
 * canonical names, some of them old spellings (Chrome and Node list Asia/Katmandu and
 * Asia/Calcutta, not Asia/Kathmandu and Asia/Kolkata), so "Kathmandu" or "Asia/Kathmandu" is
 * looked up as a name itself.
 */
function typedZones(query: string): string[] {
  const typed = query.trim();
  if (typed === '') return [];
  const candidates = typed.includes('/') ? [typed, typed.split('/').map(tzCase).join('/')] : REGIONS.map((region) => `${region}/${tzCase(typed)}`);
  return [...new Set(candidates)].filter((name) => isIanaTimezone(name));
}

/** Zones matching a search ("kath", "new york", "asia/ka"), plus the valid names the text itself spells. */
export function searchZones(zones: readonly string[], query: string, limit = 500): string[] {
  const wanted = normalize(query);
  const matches = wanted === '' ? [...zones] : zones.filter((zone) => normalize(zone).includes(wanted));
  const extra = typedZones(query).filter((name) => !matches.includes(name));
  return [...extra, ...matches].slice(0, limit);
}
