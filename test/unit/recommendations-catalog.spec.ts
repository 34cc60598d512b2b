import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOG_LIMITS, RECOMMENDATIONS_MIGRATIONS, createRecommendationsDataSource, isLandingUrl, validateCatalog } from '#libs/catalog';
import { UsageError, parseOpsCommand } from '../../apps/ops/src/cli.js';

/** The catalog file rules of `ops ads import` (pure validation) and the command line. */
const ad = (overrides: Record<string, unknown> = {}) => ({
  ad_id: 'ad_1',
  product_id: 'prod_1',
  product_title: 'Trail running shoes',
  creative_input: { short_description: 'Grippy trail shoes.' },
  landing_url: 'https://shop.example.com/shoes',
  ...overrides,
});

const problemsOf = (document: unknown) => {
  const result = validateCatalog(document);
  return result.ok ? [] : result.problems;
};

describe('validateCatalog', () => {
  it('accepts the sample catalog of the repository', () => {
    const result = validateCatalog(JSON.parse(readFileSync(join(process.cwd(), 'catalog/sample-catalog.json'), 'utf8')));
    expect(result.ok && result.ads.length).toBeGreaterThanOrEqual(15);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const topics = new Set(result.ads.map((a) => a.ad_id.split('_')[1]));
    expect(topics.size).toBeGreaterThanOrEqual(5);
  });

  it('fills the defaults of optional fields', () => {
    const result = validateCatalog({ ads: [ad()] });
    expect(result).toEqual({
      ok: true,
      ads: [{ ...ad(), weave_summary: null, tail_summary: null, keywords: [], active: true }],
    });
    expect(validateCatalog([ad({ active: false, keywords: ['shoes'], weave_summary: 'w', tail_summary: null })])).toMatchObject({
      ok: true,
      ads: [{ active: false, keywords: ['shoes'], weave_summary: 'w', tail_summary: null }],
    });
  });

  it.each([
    ['a missing ad_id', { ad_id: undefined }, 'ads[0].ad_id: is required'],
    ['an ad_id with a space', { ad_id: 'ad 1' }, 'ads[0].ad_id: must be 1-200 letters'],
    ['a too long product_id', { product_id: 'p'.repeat(201) }, 'ads[0].product_id: must be 1-200'],
    ['a blank title', { product_title: '   ' }, 'ads[0].product_title: must not be empty'],
    ['a numeric title', { product_title: 42 }, 'ads[0].product_title: must be a string'],
    ['a long summary', { weave_summary: 'x'.repeat(CATALOG_LIMITS.summaryLength + 1) }, 'ads[0].weave_summary: must be at most 2000 characters'],
    ['an empty tail summary', { tail_summary: '' }, 'ads[0].tail_summary: must not be empty'],
    ['a missing creative', { creative_input: undefined }, 'ads[0].creative_input: is required'],
    ['an array creative', { creative_input: ['x'] }, 'ads[0].creative_input: must be an object'],
    ['a non-string short description', { creative_input: { short_description: 3 } }, 'ads[0].creative_input.short_description: must be a string'],
    ['a huge creative', { creative_input: { blob: 'x'.repeat(CATALOG_LIMITS.creativeInputBytes) } }, 'ads[0].creative_input: must be at most 10000 bytes'],
    ['a javascript: URL', { landing_url: 'javascript:alert(1)' }, 'ads[0].landing_url: must be an absolute http or https URL'],
    ['a relative URL', { landing_url: '/shoes' }, 'ads[0].landing_url'],
    ['keywords as a string', { keywords: 'shoes' }, 'ads[0].keywords: must be an array of strings'],
    ['an empty keyword', { keywords: ['ok', ''] }, 'ads[0].keywords[1]: must not be empty'],
    ['too many keywords', { keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) }, 'ads[0].keywords: must have at most 50 entries'],
    ['a string active', { active: 'yes' }, 'ads[0].active: must be true or false'],
    ['an unknown field', { price: 10 }, 'ads[0].price: is not a field of an ad'],
    ['a NUL in a title', { product_title: 'Trail\u0000shoes' }, 'ads[0].product_title: must not contain the NUL character'],
    ['a NUL in a keyword', { keywords: ['ok', 'a\u0000'] }, 'ads[0].keywords[1]: must not contain the NUL character'],
    ['a NUL anywhere in creative_input', { creative_input: { extra: { deep: 'x\u0000' } } }, 'ads[0].creative_input: must not contain the NUL character'],
  ])('refuses %s', (_what, overrides, problem) => {
    const problems = problemsOf({ ads: [ad(overrides)] });
    expect(problems).toEqual([expect.stringContaining(problem)]);
  });

  it('reports every problem of every ad with its index, duplicates included', () => {
    const problems = problemsOf({
      ads: [ad(), ad({ ad_id: 'ad_2', landing_url: 'ftp://x' }), 'not an ad', ad({ keywords: [1] }), ad({ ad_id: 'ad_2' })],
    });
    expect(problems).toEqual([
      expect.stringMatching(/^ads\[1\]\.landing_url: /),
      'ads[2]: must be an object',
      'ads[3].keywords[0]: must be a string',
      'ads[3].ad_id: "ad_1" is already the ad_id of ads[0]',
      'ads[4].ad_id: "ad_2" is already the ad_id of ads[1]',
    ]);
  });

  it('refuses what is not a catalog', () => {
    expect(problemsOf(null)).toEqual([expect.stringMatching(/^catalog: must be a JSON object/)]);
    expect(problemsOf({ items: [] })).toEqual([expect.stringMatching(/^catalog: must be a JSON object/)]);
    expect(problemsOf({ ads: [] })).toEqual(['ads: must contain at least one ad']);
    expect(problemsOf({ ads: [ad()], version: 2 })).toEqual(['catalog.version: is not a field of a catalog (only "ads")']);
  });
});

describe('isLandingUrl', () => {
  it.each(['https://shop.example.com/a?b=c#d', 'http://127.0.0.1:8080/x', 'HTTPS://EXAMPLE.COM'])('accepts %s', (url) => {
    expect(isLandingUrl(url)).toBe(true);
  });

  it.each(['javascript:alert(1)', 'data:text/html,x', 'ftp://example.com', '//example.com', 'https://user:pw@example.com/', 'not a url', `https://example.com/${'x'.repeat(2048)}`, 42])(
    'refuses %s',
    (url) => {
      expect(isLandingUrl(url)).toBe(false);
    },
  );
});

describe('ops ads command line', () => {
  it('parses ads import and ads list', () => {
    expect(parseOpsCommand(['ads', 'import', '--file', 'catalog.json'])).toEqual({ kind: 'ads.import', file: 'catalog.json' });
    expect(parseOpsCommand(['ads', 'list'])).toEqual({ kind: 'ads.list', limit: 100 });
    expect(parseOpsCommand(['ads', 'list', '--limit', '7'])).toEqual({ kind: 'ads.list', limit: 7 });
  });

  it.each([[['ads', 'import']], [['ads', 'import', '--file', '']], [['ads', 'import', '--file', 'a', '--file', 'b']], [['ads', 'list', '--limit', '0']], [['ads', 'list', '--file', 'x']], [['ads', 'delete']]])(
    '%j is a usage error',
    (argv) => {
      expect(() => parseOpsCommand(argv)).toThrow(UsageError);
    },
  );
});

describe('recommendations schema migrations', () => {
  // The ops CLI imports and lists the catalog with plain SQL when every migration of this list has
  // run, and migrates through the DataSource otherwise: a migration missing here would never run from the CLI.
  it('RECOMMENDATIONS_MIGRATIONS names every migration of the recommendations DataSource, in order', () => {
    const dataSource = createRecommendationsDataSource('postgres://postgres@127.0.0.1:5432/unused', 1, 'ops');
    const names = (dataSource.options.migrations as (new () => { name?: string })[]).map((migration) => new migration().name ?? migration.name);
    expect([...RECOMMENDATIONS_MIGRATIONS]).toEqual(names);
  });
});
