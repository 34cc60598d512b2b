import type { DataSource, EntityManager } from 'typeorm';
import { importCatalogAds, type CatalogAd, type CatalogImportResult, type CatalogSql } from '#libs/catalog-core';

/** The catalog's statements (#libs/catalog-core) on a TypeORM EntityManager: PostgreSQL's rows of each. */
function managerSql(manager: EntityManager): CatalogSql {
  return { query: async (text, values) => ({ rows: await manager.query(text, values) }) };
}

/** importCatalogAds (#libs/catalog-core: the statements of `ops ads import`) in a transaction of an initialized recommendations DataSource. */
export function importCatalog(dataSource: DataSource, ads: CatalogAd[]): Promise<CatalogImportResult> {
  return importCatalogAds((work) => dataSource.transaction((manager) => work(managerSql(manager))), ads);
}
