import type { QueryResultRow } from 'pg';
import type { CatalogAd } from './catalog-validation.js';
import { RECOMMENDATIONS_SCHEMA } from './recommendations.schema.js';

/**
 * Where the catalog's statements run: a `pg` Pool, PoolClient or Client, or anything that runs a
 * statement with parameters and resolves to its rows.
 */
export interface CatalogSql {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
export type CatalogTransaction = <T>(work: (sql: CatalogSql) => Promise<T>) => Promise<T>;

/** What `ops ads import` reports: every ad of the file is exactly one of created, updated, unchanged. */
export interface CatalogImportResult {
  imported: number;
  created: number;
  updated: number;
  unchanged: number;
}

export interface CatalogAdSummary {
  ad_id: string;
  product_id: string;
  product_title: string;
  active: boolean;
  updated_at: string;
}

/** The columns an import may change; updated_at moves only when one of them does. */
const IMPORTED_COLUMNS = ['product_id', 'product_title', 'weave_summary', 'tail_summary', 'creative_input', 'landing_url', 'keywords', 'active'] as const;

/** Ads per statement; all statements of an import share one transaction. */
const CHUNK = 1000;

/** The ads of a statement as rows: the JSON of validated ads, one column per field of an ad (jsonb for the JSON ones). */
const FILE_ROWS = `jsonb_to_recordset($1::jsonb) AS file(
  ad_id text, product_id text, product_title text, weave_summary text, tail_summary text,
  creative_input jsonb, landing_url text, keywords jsonb, active boolean)`;

/**
 * The upsert of a chunk of ads (the word-index triggers are statement triggers over the
 * transition tables: they run once per statement). An ad whose fields all equal the stored ones
 * is not updated (updated_at kept); xmax = 0 tells an inserted row from an updated one. Rows are
 * written in byte order of ad_id, which for ids of ASCII characters (catalog-validation.ts) is
 * the order importCatalogAds sorts them in.
 */
const UPSERT = `
  WITH written AS (
    INSERT INTO ${RECOMMENDATIONS_SCHEMA}.ads AS stored (ad_id, ${IMPORTED_COLUMNS.join(', ')})
    SELECT ad_id, ${IMPORTED_COLUMNS.join(', ')} FROM ${FILE_ROWS} ORDER BY ad_id COLLATE "C"
    ON CONFLICT (ad_id) DO UPDATE SET ${IMPORTED_COLUMNS.map((column) => `${column} = excluded.${column}`).join(', ')}, updated_at = DEFAULT
     WHERE (${IMPORTED_COLUMNS.map((column) => `stored.${column}`).join(', ')}) IS DISTINCT FROM (${IMPORTED_COLUMNS.map((column) => `excluded.${column}`).join(', ')})
    RETURNING xmax = 0 AS created
  )
  SELECT count(*) FILTER (WHERE created)::int AS created, count(*) FILTER (WHERE NOT created)::int AS updated FROM written`;

/**
 * Upserts validated ads (readCatalogFile, validateCatalog) by ad_id in ONE transaction: all of
 * the file or nothing. Importing the same file twice changes nothing and reports every ad as
 * unchanged. Ads absent from the file stay as they are (to withdraw one, import it with
 * `"active": false`). Ads are written in ad_id order, so two imports running at once cannot
 * deadlock.
 */
export async function importCatalogAds(transaction: CatalogTransaction, ads: CatalogAd[]): Promise<CatalogImportResult> {
  const sorted = [...ads].sort((a, b) => (a.ad_id < b.ad_id ? -1 : a.ad_id > b.ad_id ? 1 : 0));
  let created = 0;
  let updated = 0;
  await transaction(async (sql) => {
    for (let i = 0; i < sorted.length; i += CHUNK) {
      const { rows } = await sql.query<{ created: number; updated: number }>(UPSERT, [JSON.stringify(sorted.slice(i, i + CHUNK))]);
      created += rows[0].created;
      updated += rows[0].updated;
    }
  });
  return { imported: ads.length, created, updated, unchanged: ads.length - created - updated };
}

/** The catalog in ad_id order (for `ops ads list`), at most `limit` ads, with the number of ads in total. */
export async function listCatalogAds(db: CatalogSql, limit: number): Promise<{ ads: CatalogAdSummary[]; total: number }> {
  const { rows } = await db.query<Omit<CatalogAdSummary, 'updated_at'> & { updated_at: Date }>(
    `SELECT ad_id, product_id, product_title, active, updated_at FROM ${RECOMMENDATIONS_SCHEMA}.ads ORDER BY ad_id LIMIT $1`,
    [limit],
  );
  const {
    rows: [{ total }],
  } = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM ${RECOMMENDATIONS_SCHEMA}.ads`);
  return { ads: rows.map((row) => ({ ...row, updated_at: row.updated_at.toISOString() })), total };
}
