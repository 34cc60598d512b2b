import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { RECOMMENDATIONS_MIGRATIONS, createRecommendationsDataSource, importCatalog, importCatalogAds, validateCatalog, type CatalogAd } from '#libs/catalog';
import { createServiceDataSource, initializeDatabase } from '#libs/database';
import { POSTGRES_ADMIN_URL, newTestDatabase, type TestDatabase } from '../support/index.js';

/**
 * `ops ads import` and `ops ads list` as a child process (the built dist/, as ops-cli.spec.ts),
 * against a database this file creates through the CLI itself: the whole file is validated
 * first (every problem reported, nothing written), then upserted by ad_id in one transaction,
 * idempotently.
 */
const CLI = resolve('dist/apps/ops/src/main.js');
const SAMPLE = resolve('catalog/sample-catalog.json');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Ad {
  ad_id: string;
  product_title: string;
  [key: string]: unknown;
}

let db: TestDatabase;
let dir: string;
let sql: pg.Client | undefined;
const sample = JSON.parse(readFileSync(SAMPLE, 'utf8')) as { ads: Ad[] };

function ops(args: string[], { url = db.url, node = [] as string[] } = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [...node, CLI, ...args], { env: { ...process.env, DATABASE_URL: url }, timeout: 60000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function opsJson(args: string[], options?: Parameters<typeof ops>[1]): Promise<Record<string, unknown>> {
  const run = await ops(args, options);
  if (run.code !== 0) throw new Error(`ops ${args.join(' ')} failed (${run.code}): ${run.stderr}`);
  expect(run.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

async function database(): Promise<pg.Client> {
  if (!sql) {
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }
  return sql;
}

async function stored(): Promise<Map<string, { product_title: string; updated_at: string; active: boolean }>> {
  const { rows } = await (await database()).query(`SELECT ad_id, product_title, active, updated_at FROM recommendations.ads`);
  return new Map(rows.map((r) => [r.ad_id as string, { product_title: r.product_title, active: r.active, updated_at: (r.updated_at as Date).toISOString() }]));
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  db = newTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'weave-ads-'));
});

afterAll(async () => {
  await sql?.end();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('ops ads import', () => {
  it('refuses an invalid file before touching the database: every problem with its index and field, exit 1', async () => {
    const ads = structuredClone(sample.ads.slice(0, 4));
    ads[1].landing_url = 'javascript:alert(1)';
    delete (ads[2] as Partial<Ad>).product_title;
    ads[3].ad_id = ads[0].ad_id;
    (ads[3] as Record<string, unknown>).colour = 'red';
    const run = await ops(['ads', 'import', '--file', await file('invalid.json', { ads })]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/is not a valid catalog \(4 problems\); nothing was imported/);
    expect(run.stderr).toContain('ads[1].landing_url: must be an absolute http or https URL');
    expect(run.stderr).toContain('ads[2].product_title: is required');
    expect(run.stderr).toContain(`ads[3].ad_id: "${ads[0].ad_id}" is already the ad_id of ads[0]`);
    expect(run.stderr).toContain('ads[3].colour: is not a field of an ad');
    // Nothing was written: the database of DATABASE_URL was not even created.
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.name])).rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  });

  it('refuses a file that is missing, not JSON or not a catalog, and a command without --file (usage, exit 2)', async () => {
    expect(await ops(['ads', 'import', '--file', join(dir, 'missing.json')])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/cannot read .*missing\.json: ENOENT/) });
    expect(await ops(['ads', 'import', '--file', await file('broken.json', '{"ads": [')])).toMatchObject({ code: 1, stderr: expect.stringMatching(/is not valid JSON/) });
    expect(await ops(['ads', 'import', '--file', await file('empty.json', { ads: [] })])).toMatchObject({ code: 1, stderr: expect.stringMatching(/ads: must contain at least one ad/) });
    expect(await ops(['ads', 'import', '--file', await file('object.json', { items: [] })])).toMatchObject({ code: 1, stderr: expect.stringMatching(/catalog: must be a JSON object/) });
    expect(await ops(['ads', 'import'])).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/needs --file/) });
  });

  it('imports the sample catalog into a new database (migrations first), searchable', async () => {
    expect(await opsJson(['ads', 'import', '--file', SAMPLE])).toEqual({ imported: sample.ads.length, created: sample.ads.length, updated: 0, unchanged: 0 });
    const ads = await stored();
    expect(ads.size).toBe(sample.ads.length);
    expect(ads.get('ad_retired_24')?.active).toBe(false);
    expect(ads.get('ad_run_trail_01')?.active).toBe(true);
    const { rows } = await (await database()).query(
      `SELECT ad_id FROM recommendations.ads WHERE search_vector @@ plainto_tsquery('english', 'espresso machine') ORDER BY ad_id`,
    );
    expect(rows.map((r) => r.ad_id)).toEqual(['ad_coffee_espresso_07']);
  });

  it('is idempotent: importing the same file again changes nothing and says so', async () => {
    const before = await stored();
    expect(await opsJson(['ads', 'import', '--file', SAMPLE])).toEqual({ imported: sample.ads.length, created: 0, updated: 0, unchanged: sample.ads.length });
    expect(await stored()).toEqual(before);
  });

  it('updates changed ads, creates new ones, leaves the rest (updated_at included) alone', async () => {
    const before = await stored();
    const ads = structuredClone(sample.ads);
    ads[0].product_title = 'StrideLab TrailFox 4 trail running shoes';
    // Key order differs from the stored JSON: still the same creative, so unchanged.
    ads[1].creative_input = Object.fromEntries(Object.entries(ads[1].creative_input as object).reverse());
    ads.push({ ...structuredClone(ads[5]), ad_id: 'ad_coffee_grinder_new', product_title: 'BurrCraft Mini hand grinder' });
    expect(await opsJson(['ads', 'import', '--file', await file('changed.json', { ads })])).toEqual({
      imported: ads.length,
      created: 1,
      updated: 1,
      unchanged: ads.length - 2,
    });
    const after = await stored();
    expect(after.get(ads[0].ad_id)?.product_title).toBe('StrideLab TrailFox 4 trail running shoes');
    expect(Date.parse(after.get(ads[0].ad_id)!.updated_at)).toBeGreaterThan(Date.parse(before.get(ads[0].ad_id)!.updated_at));
    expect(after.get(ads[1].ad_id)).toEqual(before.get(ads[1].ad_id));
    expect(after.get('ad_coffee_grinder_new')?.product_title).toBe('BurrCraft Mini hand grinder');
    // A bare array of ads is a catalog too.
    expect(await opsJson(['ads', 'import', '--file', await file('array.json', ads)])).toMatchObject({ created: 0, updated: 0, unchanged: ads.length });
  });

  it('writes nothing of a file with one invalid ad among valid changes', async () => {
    const before = await stored();
    const ads = structuredClone(sample.ads);
    ads[0].product_title = 'Changed title that must not be stored';
    ads.push({ ...structuredClone(ads[2]), ad_id: 'ad_never_written', keywords: ['fine', ''] });
    const run = await ops(['ads', 'import', '--file', await file('partly.json', { ads })]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`ads[${ads.length - 1}].keywords[1]: must not be empty`);
    expect(await stored()).toEqual(before);
  });

  it('lists the catalog in ad_id order', async () => {
    const listed = await opsJson(['ads', 'list', '--limit', '2']);
    const total = (await stored()).size;
    expect(listed).toEqual({
      total,
      ads: [
        { ad_id: 'ad_audio_anc_21', product_id: 'prod_hush_anc_pro', product_title: expect.any(String), active: true, updated_at: expect.any(String) },
        { ad_id: 'ad_audio_buds_22', product_id: 'prod_hush_sportbuds', product_title: expect.any(String), active: true, updated_at: expect.any(String) },
      ],
    });
    expect(await ops(['ads', 'list', '--limit', '5000'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/at most 1000/) });
  });
});

/** A Node option that makes any import of TypeORM fail (a module resolution hook). */
const WITHOUT_TYPEORM = [
  '--import',
  `data:text/javascript,${encodeURIComponent(
    `import { register } from 'node:module';
     register('data:text/javascript,' + encodeURIComponent('export async function resolve(specifier, context, next) {' +
       ' if (specifier === "typeorm" || specifier.startsWith("typeorm/")) throw new Error("TypeORM was loaded");' +
       ' return next(specifier, context); }'));`,
  )}`,
];

/** Rows of the word index that differ from the index rebuilt from the ads (0 when the triggers kept it exact). */
async function wordIndexDrift(client: pg.Client): Promise<number> {
  const terms = `SELECT u.lexeme, recommendations.term_weight(u.weights) AS weight, a.ad_id FROM recommendations.ads a, unnest(a.search_vector) u WHERE a.active`;
  const stats = `SELECT u.lexeme, count(*)::int AS ads FROM recommendations.ads a, unnest(a.search_vector) u WHERE a.active GROUP BY u.lexeme`;
  const weights = `SELECT a.ad_id, u.lexeme, recommendations.term_weight(u.weights) FROM recommendations.ads a, unnest(a.search_vector) u WHERE a.active`;
  const { rows } = await client.query<{ drift: number }>(
    `SELECT (SELECT count(*) FROM ((SELECT lexeme, weight, ad_id FROM recommendations.ad_terms EXCEPT ALL ${terms})
                                   UNION ALL (${terms} EXCEPT ALL SELECT lexeme, weight, ad_id FROM recommendations.ad_terms)) d)
          + (SELECT count(*) FROM ((SELECT lexeme, ads FROM recommendations.lexeme_stats WHERE ads > 0 EXCEPT ${stats})
                                   UNION ALL (${stats} EXCEPT SELECT lexeme, ads FROM recommendations.lexeme_stats)) d)
          + (SELECT count(*) FROM ((SELECT ad_id, l.lexeme, l.weight FROM recommendations.ad_term_weights, unnest(lexemes, weights) l(lexeme, weight) EXCEPT ALL ${weights})
                                   UNION ALL (${weights} EXCEPT ALL SELECT ad_id, l.lexeme, l.weight FROM recommendations.ad_term_weights, unnest(lexemes, weights) l(lexeme, weight))) d)
          + (SELECT count(*) FROM recommendations.catalog_stats WHERE ads <> (SELECT count(*) FROM recommendations.ads WHERE active)) AS drift`,
  );
  return Number(rows[0].drift);
}

describe('ops ads and the recommendations schema', () => {
  it('reads and writes a current schema without loading TypeORM (plain pg)', async () => {
    expect(await opsJson(['ads', 'list', '--limit', '1'], { node: WITHOUT_TYPEORM })).toMatchObject({ total: expect.any(Number) });
    expect(await opsJson(['ads', 'import', '--file', SAMPLE], { node: WITHOUT_TYPEORM })).toMatchObject({ imported: sample.ads.length, created: 0 });
    // The hook works: a database without the schema needs TypeORM to migrate it.
    const fresh = newTestDatabase();
    try {
      expect(await ops(['ads', 'list'], { url: fresh.url, node: WITHOUT_TYPEORM })).toMatchObject({ code: 1, stderr: expect.stringContaining('TypeORM was loaded') });
    } finally {
      await fresh.drop();
    }
  });

  it('runs the missing migrations of a schema behind before importing, through the DataSource', async () => {
    const behind = newTestDatabase();
    const client = new pg.Client({ connectionString: behind.url });
    try {
      // The schema as it was before its last migration.
      const migrations = createRecommendationsDataSource(behind.url, 1, 'test').options.migrations as (new () => unknown)[];
      const older = createServiceDataSource({ url: behind.url, schema: 'recommendations', entities: [], migrations: migrations.slice(0, -1), applicationName: 'test' });
      await initializeDatabase(older);
      await older.destroy();
      expect(await opsJson(['ads', 'import', '--file', SAMPLE], { url: behind.url })).toEqual({ imported: sample.ads.length, created: sample.ads.length, updated: 0, unchanged: 0 });
      await client.connect();
      const { rows } = await client.query('SELECT name FROM recommendations.migrations ORDER BY id');
      expect(rows.map((row) => row.name)).toEqual([...RECOMMENDATIONS_MIGRATIONS]);
      expect((await client.query('SELECT ads FROM recommendations.catalog_stats')).rows[0].ads).toBe(sample.ads.filter((ad) => ad.active !== false).length);
      expect(await wordIndexDrift(client)).toBe(0);
    } finally {
      await client.end().catch(() => undefined);
      await behind.drop();
    }
  });

  it('imports through the recommendations DataSource with the same statements and counts as the CLI', async () => {
    const file = validateCatalog(structuredClone(sample));
    if (!file.ok) throw new Error(file.problems.join('\n'));
    const dataSource = createRecommendationsDataSource(db.url, 2, 'test');
    try {
      await initializeDatabase(dataSource);
      expect(await importCatalog(dataSource, file.ads)).toEqual({ imported: file.ads.length, created: 0, updated: 0, unchanged: file.ads.length });
      const before = await stored();
      file.ads[3].keywords = [...file.ads[3].keywords, 'gift idea'];
      expect(await importCatalog(dataSource, file.ads)).toEqual({ imported: file.ads.length, created: 0, updated: 1, unchanged: file.ads.length - 1 });
      const after = await stored();
      expect(Date.parse(after.get(file.ads[3].ad_id)!.updated_at)).toBeGreaterThan(Date.parse(before.get(file.ads[3].ad_id)!.updated_at));
      const { rows } = await (await database()).query(`SELECT keywords, jsonb_typeof(keywords) AS type FROM recommendations.ads WHERE ad_id = $1`, [file.ads[3].ad_id]);
      expect(rows[0]).toEqual({ keywords: file.ads[3].keywords, type: 'array' });
    } finally {
      await dataSource.destroy();
    }
  });

  it('keeps the word index exact through one session of imports, its statements planned for each batch', async () => {
    // One session throughout, as a pooled connection of a service: the triggers first run on an
    // empty catalog (the UPDATE trigger of an INSERT … ON CONFLICT of new ads, with no old rows).
    const fresh = newTestDatabase();
    const client = new pg.Client({ connectionString: fresh.url });
    try {
      const migrate = createRecommendationsDataSource(fresh.url, 2, 'test');
      await initializeDatabase(migrate);
      await migrate.destroy();
      await client.connect();
      const transaction = async <T>(work: (sql: pg.Client) => Promise<T>): Promise<T> => {
        await client.query('BEGIN');
        try {
          const result = await work(client);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
      };
      const file = validateCatalog(structuredClone(sample));
      if (!file.ok) throw new Error(file.problems.join('\n'));
      const ads: CatalogAd[] = file.ads;
      // The plans of the trigger's statements (auto_explain of the statements inside the trigger functions).
      const plans: string[] = [];
      client.on('notice', (notice) => plans.push(notice.message ?? ''));
      await client.query(`LOAD 'auto_explain'`);
      await client.query(`SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = 'notice'`);
      expect(await importCatalogAds(transaction, ads)).toMatchObject({ created: ads.length });
      expect(await wordIndexDrift(client)).toBe(0);

      // New words for most ads (the UPDATE trigger forgets the old ones, learns the new ones).
      plans.length = 0;
      const reworded = ads.map((ad, i) => (i % 4 === 3 ? ad : { ...ad, product_title: `${ad.product_title} refurbished ${i}`, keywords: [...ad.keywords, `edition ${i}`] }));
      expect(await importCatalogAds(transaction, reworded)).toMatchObject({ updated: reworded.filter((ad, i) => ad !== ads[i]).length });
      expect(await wordIndexDrift(client)).toBe(0);
      // Planned for this batch: the scan of old_ads expects the rows it has (a plan kept from the
      // first run, when old_ads was empty, expects 1 and scanned the whole word index per ad).
      const forget = plans.find((plan) => plan.includes('DELETE FROM recommendations.ad_terms'));
      expect(forget).toBeDefined();
      const expected = Number(/Named Tuplestore Scan +\(cost=[\d.]+ rows=(\d+)/.exec(forget!)?.[1]);
      expect(expected).toBeGreaterThan(1);
      expect(expected).toBeLessThanOrEqual(reworded.length);
      await client.query(`SET auto_explain.log_min_duration = -1`);

      // Withdrawn, back, and deleted outright: the index follows each.
      const withdrawn = reworded.map((ad, i) => (i % 3 === 0 ? { ...ad, active: !(ad.active ?? true) } : ad));
      await importCatalogAds(transaction, withdrawn);
      expect(await wordIndexDrift(client)).toBe(0);
      await importCatalogAds(transaction, reworded);
      expect(await wordIndexDrift(client)).toBe(0);
      await client.query(`DELETE FROM recommendations.ads WHERE ad_id = ANY($1)`, [reworded.filter((_, i) => i % 5 === 0).map((ad) => ad.ad_id)]);
      expect(await wordIndexDrift(client)).toBe(0);
      expect((await client.query('SELECT ads FROM recommendations.catalog_stats')).rows[0].ads).toBe(
        reworded.filter((ad, i) => i % 5 !== 0 && ad.active !== false).length,
      );
    } finally {
      await client.end().catch(() => undefined);
      await fresh.drop();
    }
  });

  it('runs two imports of overlapping catalogs at once to the end, the word index exact', async () => {
    const first = structuredClone(sample.ads).map((ad, i) => (i % 2 === 0 ? { ...ad, product_title: `${ad.product_title} (first)` } : ad));
    const second = structuredClone(sample.ads)
      .reverse()
      .map((ad, i) => (i % 3 === 0 ? { ...ad, active: !(ad.active ?? true), keywords: ['second import'] } : ad));
    second.push({ ...structuredClone(sample.ads[0]), ad_id: 'ad_second_only' });
    const [a, b] = await Promise.all([
      opsJson(['ads', 'import', '--file', await file('first.json', { ads: first })]),
      opsJson(['ads', 'import', '--file', await file('second.json', { ads: second })]),
    ]);
    expect(a).toMatchObject({ imported: first.length });
    expect(b).toMatchObject({ imported: second.length });
    expect(await wordIndexDrift(await database())).toBe(0);
  });
});
