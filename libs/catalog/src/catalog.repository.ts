import type { DataSource } from 'typeorm';
import type { CatalogAd } from './catalog-validation.js';

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

/** Ads per INSERT statement (one JSON parameter each); all chunks share one transaction. */
const CHUNK = 1000;

/**
 * Upserts ads by ad_id in ONE transaction: all of the file or nothing. An ad whose fields all
 * equal the stored ones is left alone (updated_at kept), so importing the same file twice
 * changes nothing and reports every ad as unchanged. Ads absent from the file stay as they are
 * (to withdraw one, import it with `"active": false`). Ads are written in ad_id order, so two
 * imports running at once cannot deadlock.
 */
export async function importCatalog(dataSource: DataSource, ads: CatalogAd[]): Promise<CatalogImportResult> {
  const sorted = [...ads].sort((a, b) => (a.ad_id < b.ad_id ? -1 : a.ad_id > b.ad_id ? 1 : 0));
  let created = 0;
  let updated = 0;
  await dataSource.transaction(async (manager) => {
    for (let i = 0; i < sorted.length; i += CHUNK) {
      const rows: { created: boolean }[] = await manager.query(
        `INSERT INTO recommendations.ads AS a
           (ad_id, product_id, product_title, weave_summary, tail_summary, creative_input, landing_url, keywords, active, created_at, updated_at)
         SELECT x.ad_id, x.product_id, x.product_title, x.weave_summary, x.tail_summary, x.creative_input, x.landing_url, x.keywords, x.active, now(), now()
           FROM jsonb_to_recordset($1::jsonb) AS x(ad_id text, product_id text, product_title text, weave_summary text, tail_summary text,
                                                    creative_input jsonb, landing_url text, keywords jsonb, active boolean)
         ON CONFLICT (ad_id) DO UPDATE SET
           product_id = EXCLUDED.product_id, product_title = EXCLUDED.product_title, weave_summary = EXCLUDED.weave_summary,
           tail_summary = EXCLUDED.tail_summary, creative_input = EXCLUDED.creative_input, landing_url = EXCLUDED.landing_url,
           keywords = EXCLUDED.keywords, active = EXCLUDED.active, updated_at = now()
         WHERE (a.product_id, a.product_title, a.weave_summary, a.tail_summary, a.creative_input, a.landing_url, a.keywords, a.active)
               IS DISTINCT FROM
               (EXCLUDED.product_id, EXCLUDED.product_title, EXCLUDED.weave_summary, EXCLUDED.tail_summary, EXCLUDED.creative_input,
                EXCLUDED.landing_url, EXCLUDED.keywords, EXCLUDED.active)
         RETURNING (xmax = 0) AS created`,
        [JSON.stringify(sorted.slice(i, i + CHUNK))],
      );
      for (const row of rows) {
        if (row.created) created++;
        else updated++;
      }
    }
  });
  return { imported: ads.length, created, updated, unchanged: ads.length - created - updated };
}

/** The catalog in ad_id order (for `ops ads list`), with the number of ads in total. */
export async function listCatalog(dataSource: DataSource, limit: number): Promise<{ ads: CatalogAdSummary[]; total: number }> {
  const rows: (Omit<CatalogAdSummary, 'updated_at'> & { updated_at: Date })[] = await dataSource.query(
    `SELECT ad_id, product_id, product_title, active, updated_at FROM recommendations.ads ORDER BY ad_id LIMIT $1`,
    [limit],
  );
  const [{ total }]: { total: number }[] = await dataSource.query(`SELECT count(*)::int AS total FROM recommendations.ads`);
  return { ads: rows.map((row) => ({ ...row, updated_at: row.updated_at.toISOString() })), total };
}
