/**
 * The catalog file of `ops ads import` and its validation. Pure: no I/O, so the rules are unit
 * tested (test/unit/recommendations-catalog.spec.ts) and the CLI reports every problem of a file
 * at once, each with the index of the ad and the field, before anything is written.
 *
 * File: `{ "ads": [ ad, … ] }` (or a bare array of ads), UTF-8 JSON. An ad:
 *
 * | field | required | rule |
 * | - | - | - |
 * | ad_id, product_id | yes | 1–200 of letters, digits, `_ . : -`, starting with a letter or digit; ad_id unique in the file |
 * | product_title | yes | 1–300 characters, not blank |
 * | weave_summary, tail_summary | no | 1–2000 characters, not blank (or null) |
 * | creative_input | yes | object, at most 10,000 bytes as JSON; `short_description` (if given) 1–1000 characters |
 * | landing_url | yes | absolute http(s) URL, at most 2048 characters, no user or password |
 * | keywords | no | array of at most 50 strings of 1–100 characters (default `[]`) |
 * | active | no | boolean (default true); an inactive ad is never recommended |
 */

export interface CatalogAd {
  ad_id: string;
  product_id: string;
  product_title: string;
  weave_summary: string | null;
  tail_summary: string | null;
  creative_input: { short_description?: string; [key: string]: unknown };
  landing_url: string;
  keywords: string[];
  active: boolean;
}

export type CatalogValidation = { ok: true; ads: CatalogAd[] } | { ok: false; problems: string[] };

export const CATALOG_LIMITS = {
  ads: 50000,
  idLength: 200,
  titleLength: 300,
  summaryLength: 2000,
  shortDescriptionLength: 1000,
  creativeInputBytes: 10000,
  urlLength: 2048,
  keywords: 50,
  keywordLength: 100,
} as const;

const FIELDS = ['ad_id', 'product_id', 'product_title', 'weave_summary', 'tail_summary', 'creative_input', 'landing_url', 'keywords', 'active'];
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a string is an absolute http(s) URL a click may be redirected to. */
export function isLandingUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > CATALOG_LIMITS.urlLength) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
}

/** PostgreSQL stores no NUL character, in text or in jsonb. */
const NO_NUL = 'must not contain the NUL character (U+0000)';

function text(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.trim() === '') return 'must not be empty';
  if (value.length > max) return `must be at most ${max} characters`;
  if (value.includes('\u0000')) return NO_NUL;
  return undefined;
}

function id(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length === 0 || value.length > CATALOG_LIMITS.idLength || !ID_PATTERN.test(value)) {
    return `must be 1-${CATALOG_LIMITS.idLength} letters, digits, "_", ".", ":" or "-", starting with a letter or digit`;
  }
  return undefined;
}

/** The problems of one ad, as `field: message`, and the ad when there are none. */
function validateAd(item: unknown): { problems: [string, string][]; ad?: CatalogAd } {
  if (!isPlainObject(item)) return { problems: [['', 'must be an object']] };
  const problems: [string, string][] = [];
  const check = (field: string, problem: string | undefined) => {
    if (problem) problems.push([field, problem]);
  };
  for (const key of Object.keys(item)) if (!FIELDS.includes(key)) problems.push([key, 'is not a field of an ad']);

  check('ad_id', item.ad_id === undefined ? 'is required' : id(item.ad_id));
  check('product_id', item.product_id === undefined ? 'is required' : id(item.product_id));
  check('product_title', item.product_title === undefined ? 'is required' : text(item.product_title, CATALOG_LIMITS.titleLength));
  for (const field of ['weave_summary', 'tail_summary']) {
    if (item[field] !== undefined && item[field] !== null) check(field, text(item[field], CATALOG_LIMITS.summaryLength));
  }

  const creative = item.creative_input;
  if (creative === undefined) check('creative_input', 'is required');
  else if (!isPlainObject(creative)) check('creative_input', 'must be an object');
  else {
    if (creative.short_description !== undefined) check('creative_input.short_description', text(creative.short_description, CATALOG_LIMITS.shortDescriptionLength));
    const json = JSON.stringify(creative);
    if (json.includes('\\u0000')) check('creative_input', NO_NUL);
    if (Buffer.byteLength(json, 'utf8') > CATALOG_LIMITS.creativeInputBytes) {
      check('creative_input', `must be at most ${CATALOG_LIMITS.creativeInputBytes} bytes as JSON`);
    }
  }

  if (item.landing_url === undefined) check('landing_url', 'is required');
  else if (!isLandingUrl(item.landing_url)) {
    check('landing_url', `must be an absolute http or https URL of at most ${CATALOG_LIMITS.urlLength} characters, without user or password`);
  }

  const keywords = item.keywords;
  if (keywords !== undefined) {
    if (!Array.isArray(keywords)) check('keywords', 'must be an array of strings');
    else {
      if (keywords.length > CATALOG_LIMITS.keywords) check('keywords', `must have at most ${CATALOG_LIMITS.keywords} entries`);
      keywords.forEach((keyword, i) => check(`keywords[${i}]`, text(keyword, CATALOG_LIMITS.keywordLength)));
    }
  }
  if (item.active !== undefined && typeof item.active !== 'boolean') check('active', 'must be true or false');

  if (problems.length > 0) return { problems };
  return {
    problems,
    ad: {
      ad_id: item.ad_id as string,
      product_id: item.product_id as string,
      product_title: item.product_title as string,
      weave_summary: (item.weave_summary as string | null | undefined) ?? null,
      tail_summary: (item.tail_summary as string | null | undefined) ?? null,
      creative_input: creative as CatalogAd['creative_input'],
      landing_url: item.landing_url as string,
      keywords: (keywords as string[] | undefined) ?? [],
      active: (item.active as boolean | undefined) ?? true,
    },
  };
}

/**
 * Validates a parsed catalog file as a whole: every problem of every ad (`ads[3].landing_url:
 * must be …`), duplicate ad ids included. Nothing is imported unless the whole file is valid.
 */
export function validateCatalog(document: unknown): CatalogValidation {
  const list = Array.isArray(document) ? document : isPlainObject(document) ? document.ads : undefined;
  if (!Array.isArray(list)) return { ok: false, problems: ['catalog: must be a JSON object {"ads": [...]} or a JSON array of ads'] };
  if (isPlainObject(document)) {
    const extra = Object.keys(document).filter((key) => key !== 'ads');
    if (extra.length > 0) return { ok: false, problems: extra.map((key) => `catalog.${key}: is not a field of a catalog (only "ads")`) };
  }
  if (list.length === 0) return { ok: false, problems: ['ads: must contain at least one ad'] };
  if (list.length > CATALOG_LIMITS.ads) return { ok: false, problems: [`ads: at most ${CATALOG_LIMITS.ads} ads per file`] };

  const problems: string[] = [];
  const ads: CatalogAd[] = [];
  const firstIndex = new Map<string, number>();
  list.forEach((item, index) => {
    const result = validateAd(item);
    for (const [field, message] of result.problems) problems.push(`ads[${index}]${field ? `.${field}` : ''}: ${message}`);
    const adId = isPlainObject(item) && id(item.ad_id) === undefined ? (item.ad_id as string) : undefined;
    if (adId !== undefined) {
      const seen = firstIndex.get(adId);
      if (seen !== undefined) problems.push(`ads[${index}].ad_id: "${adId}" is already the ad_id of ads[${seen}]`);
      else firstIndex.set(adId, index);
    }
    if (result.ad) ads.push(result.ad);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, ads };
}
