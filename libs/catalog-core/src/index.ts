/**
 * The recommendations catalog without a database library: the catalog file and its validation
 * (catalog-validation.ts, catalog-file.ts), and the statements that import and list ads on a
 * plain `pg` connection (catalog-sql.ts). #libs/catalog re-exports all of it beside its TypeORM
 * entities, DataSource and migrations; the ops CLI takes it from here so that `ads import` and
 * `ads list` do not load TypeORM.
 */
export { CATALOG_TEXT_SEARCH_CONFIG, RECOMMENDATIONS_MIGRATIONS, RECOMMENDATIONS_SCHEMA } from './recommendations.schema.js';
export { CATALOG_LIMITS, isLandingUrl, validateCatalog, type CatalogAd, type CatalogValidation } from './catalog-validation.js';
export { CatalogFileError, describeCatalogFileError, readCatalogFile } from './catalog-file.js';
export { importCatalogAds, listCatalogAds, type CatalogAdSummary, type CatalogImportResult, type CatalogSql } from './catalog-sql.js';
