/**
 * Catalog writes with the word-index triggers on, as `ops ads import` does them (importCatalogAds:
 * upserts of 1,000 ads per statement, one transaction): INSERTS generated ads into an empty catalog,
 * then re-imports UPDATES of them with other words (same ad_ids, the ads of another seed of
 * bench/catalog-generator.ts), then WITHDRAWS as many (active false) and brings them back. Prints
 * each step's seconds and the CPU of its PostgreSQL backend, and the update's time beside the same
 * run's insert, its ceiling (an update forgets an ad's words and learns others: about twice an
 * insert's work per ad).
 *
 *   node dist/bench/catalog-update.bench.js
 *   INSERTS=20000 UPDATES=10000 are the defaults. EXPLAIN=1 prints the plans of the trigger's
 *   statements of one chunk of the update (auto_explain, nested statements, in the session).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { createRecommendationsDataSource, importCatalogAds, type CatalogAd, type CatalogSql } from '#libs/catalog';
import { initializeDatabase } from '#libs/database';
import { newTestDatabase } from '../test/support/index.js';
import { generateAd } from './catalog-generator.js';
import { machine, processCpuSeconds, setting } from './support.js';

const INSERTS = setting('INSERTS', 20_000);
const UPDATES = setting('UPDATES', 10_000);

/** The ads numbered `from`, `from + step`, … (`count` of them) of catalog `seed`; another seed gives the same ad_ids other words. */
const ads = (count: number, seed: number, step = 1): CatalogAd[] => Array.from({ length: count }, (_, k) => generateAd(k * step, seed));

async function main() {
  console.log(machine());
  const db = newTestDatabase();
  const dataSource = createRecommendationsDataSource(db.url, 2, 'bench-catalog-update');
  await initializeDatabase(dataSource);
  await dataSource.destroy();
  const admin = new pg.Client({ connectionString: db.url, application_name: 'bench-catalog-update' });
  await admin.connect();
  let shared: pg.Client | undefined;
  try {
    /**
     * Each import in a session of its own, as `ops ads import` runs each in its own process, or with
     * ONE_SESSION=1 all of them in one session, as a service's pooled connection would (a trigger's
     * static statements are planned at its first run in a session and that plan kept).
     */
    const session = async () => {
      if (shared) return shared;
      const client = new pg.Client({ connectionString: db.url, application_name: 'bench-catalog-update' });
      await client.connect();
      if (process.env.ONE_SESSION === '1') shared = client;
      return client;
    };
    const step = async (label: string, batch: CatalogAd[], explain = false) => {
      const client = await session();
      try {
        const {
          rows: [{ pid }],
        } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        if (explain) {
          await client.query(`LOAD 'auto_explain'`);
          await client.query(`SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = 'notice'`);
          client.on('notice', (notice) => console.log(notice.message));
        }
        const explained = () => {
          if (!explain) return Promise.resolve();
          client.removeAllListeners('notice');
          return client.query('SET auto_explain.log_min_duration = -1');
        };
        const transaction = async <T>(work: (sql: CatalogSql) => Promise<T>): Promise<T> => {
          await client.query('BEGIN');
          try {
            const result = await work(client);
            // The explained import is not kept: the measured ones start from the same catalog.
            await client.query(explain ? 'ROLLBACK' : 'COMMIT');
            return result;
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        };
        const cpu = processCpuSeconds(pid);
        const started = process.hrtime.bigint();
        const result = await importCatalogAds(transaction, batch);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const pgSeconds = processCpuSeconds(pid) - cpu;
        console.log(
          `${label.padEnd(38)} ${seconds.toFixed(1).padStart(6)} s, PostgreSQL CPU ${pgSeconds.toFixed(1).padStart(6)} s ` +
            `(${Math.round((pgSeconds * 1e6) / batch.length)} µs per ad); created ${result.created}, updated ${result.updated}; load average ${loadavg()[0].toFixed(1)}`,
        );
        await explained();
        return seconds;
      } finally {
        if (client !== shared) await client.end();
      }
    };
    const inserted = await step(`${INSERTS.toLocaleString('en-US')} inserts into an empty catalog`, ads(INSERTS, 1));
    // ANALYZE=1: statistics of the written tables first (autovacuum may or may not have analyzed them after an import).
    if (process.env.ANALYZE === '1') await admin.query('ANALYZE recommendations.ads, recommendations.ad_terms, recommendations.lexeme_stats, recommendations.ad_term_weights');
    const changed = ads(UPDATES, 2, Math.max(1, Math.floor(INSERTS / UPDATES)));
    if (process.env.EXPLAIN) await step('(explained, rolled back)', changed.slice(0, 1000), true);
    const updated = await step(`${UPDATES.toLocaleString('en-US')} updates (other words) of ${INSERTS.toLocaleString('en-US')}`, changed);
    await step(`${UPDATES.toLocaleString('en-US')} withdrawn (active false)`, changed.map((ad) => ({ ...ad, active: false })));
    await step(`${UPDATES.toLocaleString('en-US')} back (active true)`, changed);
    console.log(`update / insert (same run): ${(updated / inserted).toFixed(2)} × the insert's time for ${(UPDATES / INSERTS).toFixed(2)} × its ads`);
  } finally {
    await shared?.end();
    await admin.end();
    await db.drop();
  }
}

await main();
