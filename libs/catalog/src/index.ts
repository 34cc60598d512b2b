export { CATALOG_TEXT_SEARCH_CONFIG, RECOMMENDATIONS_SCHEMA } from './recommendations.schema.js';
export { createRecommendationsDataSource } from './catalog.data-source.js';
export { CATALOG_LIMITS, isLandingUrl, validateCatalog, type CatalogAd, type CatalogValidation } from './catalog-validation.js';
export { importCatalog, listCatalog, type CatalogAdSummary, type CatalogImportResult } from './catalog.repository.js';
export { RecommendationEntity } from './recommendation.entity.js';
export { RecommendationOutboxEntity } from './recommendation-outbox.entity.js';
export { RecommendationRequestEntity } from './recommendation-request.entity.js';
export { CatalogFileError, describeCatalogFileError, readCatalogFile } from './catalog-file.js';
export { WORD_INDEX_REBUILD } from './migrations/1764633600000-recommendations-ad-terms.js';
