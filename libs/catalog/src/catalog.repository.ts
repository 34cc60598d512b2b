import type { DataSource, QueryDeepPartialEntity } from 'typeorm';
import { AdEntity } from './ad.entity.js';
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

/** Ads per INSERT statement (9 parameters each, under PostgreSQL's 65,535); all chunks share one transaction. */
const CHUNK = 1000;

/** The columns an import may change; updated_at moves only when one of them does. */
const IMPORTED_COLUMNS = ['product_id', 'product_title', 'weave_summary', 'tail_summary', 'creative_input', 'landing_url', 'keywords', 'active'] as const;

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
      const result = await manager
        .createQueryBuilder()
        .insert()
        .into(AdEntity)
        // creative_input is any JSON object: TypeORM's deep-partial type cannot follow an open index signature.
        .values(sorted.slice(i, i + CHUNK) as QueryDeepPartialEntity<AdEntity>[])
        // ON CONFLICT (ad_id) DO UPDATE … updated_at = DEFAULT WHERE (any column IS DISTINCT FROM the new value)
        .orUpdate([...IMPORTED_COLUMNS], ['ad_id'], { skipUpdateIfNoValuesChanged: true })
        // Raw fragment: xmax = 0 is how PostgreSQL tells an inserted row from an updated one; TypeORM has no API for it.
        .returning('(xmax = 0) AS created')
        .updateEntity(false)
        .execute();
      for (const row of result.raw as { created: boolean }[]) {
        if (row.created) created++;
        else updated++;
      }
    }
  });
  return { imported: ads.length, created, updated, unchanged: ads.length - created - updated };
}

/** The catalog in ad_id order (for `ops ads list`), with the number of ads in total. */
export async function listCatalog(dataSource: DataSource, limit: number): Promise<{ ads: CatalogAdSummary[]; total: number }> {
  const [rows, total] = await dataSource.getRepository(AdEntity).findAndCount({
    select: { ad_id: true, product_id: true, product_title: true, active: true, updated_at: true },
    order: { ad_id: 'ASC' },
    take: limit,
  });
  return {
    ads: rows.map(({ ad_id, product_id, product_title, active, updated_at }) => ({ ad_id, product_id, product_title, active, updated_at: updated_at.toISOString() })),
    total,
  };
}
