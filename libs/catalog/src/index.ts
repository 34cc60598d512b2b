export { CATALOG_TEXT_SEARCH_CONFIG, RECOMMENDATIONS_SCHEMA, createRecommendationsDataSource } from './catalog.data-source.js';
export { CATALOG_LIMITS, isLandingUrl, validateCatalog, type CatalogAd, type CatalogValidation } from './catalog-validation.js';
export { importCatalog, listCatalog, type CatalogAdSummary, type CatalogImportResult } from './catalog.repository.js';
