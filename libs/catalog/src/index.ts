// The catalog file, its validation and its SQL need no database library (the ops CLI takes them from #libs/catalog-core itself).
export * from '#libs/catalog-core';
export { createRecommendationsDataSource } from './catalog.data-source.js';
export { importCatalog } from './catalog.repository.js';
export { RecommendationEntity } from './recommendation.entity.js';
export { RecommendationOutboxEntity } from './recommendation-outbox.entity.js';
export { RecommendationRequestEntity } from './recommendation-request.entity.js';
export { WORD_INDEX_REBUILD } from './migrations/1764892800000-recommendations-ad-term-weights.js';
