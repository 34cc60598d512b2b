/**
 * Loads a generated catalog (catalog-generator.ts) straight into schema `recommendations` of a
 * database, migrated first as the service would: batched INSERT … SELECT FROM unnest(arrays),
 * the ads of a batch in one statement (what `ops ads import` does a thousand at a time through
 * TypeORM, without its per-ad bookkeeping), with the word-index triggers disabled and the word
 * index rebuilt once at the end (WORD_INDEX_REBUILD), so a million ads load in minutes.
 *
 *   node dist/bench/catalog-load.js <DATABASE_URL> <size>
 */
import pg from 'pg';
import { WORD_INDEX_REBUILD, createRecommendationsDataSource } from '#libs/catalog';
import { initializeDatabase } from '#libs/database';
import { generateAd } from './catalog-generator.js';

const BATCH = 5000;

/** Migrates schema `recommendations` of `databaseUrl` and adds ads [from, to) of the generated catalog; returns the seconds it took. */
export async function loadCatalog(databaseUrl: string, to: number, { from = 0, log = (_line: string): void => undefined }: { from?: number; log?: (line: string) => void } = {}): Promise<number> {
  const started = Date.now();
  const dataSource = createRecommendationsDataSource(databaseUrl, 2, 'bench-catalog-load');
  await initializeDatabase(dataSource);
  await dataSource.destroy();
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-catalog-load' });
  await client.connect();
  try {
    await client.query(`SET maintenance_work_mem = '512MB'`);
    // Superuser (the bench's database): the triggers that keep the word index row by row are off while loading.
    await client.query('ALTER TABLE recommendations.ads DISABLE TRIGGER USER');
    for (let start = from; start < to; start += BATCH) {
      const columns: unknown[][] = [[], [], [], [], [], [], [], []];
      for (let i = start; i < Math.min(to, start + BATCH); i++) {
        const ad = generateAd(i);
        const values = [ad.ad_id, ad.product_id, ad.product_title, ad.weave_summary, ad.tail_summary, JSON.stringify(ad.creative_input), ad.landing_url, JSON.stringify(ad.keywords)];
        values.forEach((value, k) => columns[k].push(value));
      }
      await client.query(
        `INSERT INTO recommendations.ads (ad_id, product_id, product_title, weave_summary, tail_summary, creative_input, landing_url, keywords)
         SELECT a, p, t, w, s, c::jsonb, l, k::jsonb
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS x(a, p, t, w, s, c, l, k)`,
        columns,
      );
      if ((start / BATCH) % 20 === 19) log(`  ${Math.min(to, start + BATCH).toLocaleString('en-US')} ads loaded (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    await client.query('BEGIN');
    for (const statement of WORD_INDEX_REBUILD) await client.query(statement);
    await client.query('ALTER TABLE recommendations.ads ENABLE TRIGGER USER');
    await client.query('COMMIT');
    log(`  word index rebuilt (${Math.round((Date.now() - started) / 1000)} s)`);
    for (const table of ['ads', 'ad_terms', 'lexeme_stats']) await client.query(`VACUUM ANALYZE recommendations.${table}`);
  } finally {
    await client.end();
  }
  return (Date.now() - started) / 1000;
}

if (process.argv[1]?.endsWith('catalog-load.js')) {
  const [url, size] = process.argv.slice(2);
  const seconds = await loadCatalog(url, Number(size), { log: (line) => void process.stderr.write(`${line}\n`) });
  process.stdout.write(`${Number(size).toLocaleString('en-US')} ads in ${Math.round(seconds)} s\n`);
}
