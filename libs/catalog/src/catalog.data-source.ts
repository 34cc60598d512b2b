import { createServiceDataSource, type ServiceDataSource } from '#libs/database';
import { AdEntity } from './ad.entity.js';
import { RecommendationsInitial1764460800000 } from './migrations/1764460800000-recommendations-initial.js';
import { RecommendationsSearchVectorMetadata1764547200000 } from './migrations/1764547200000-recommendations-search-vector-metadata.js';
import { RecommendationsAdTerms1764633600000 } from './migrations/1764633600000-recommendations-ad-terms.js';
import { RecommendationsTermWeightInline1764720000000 } from './migrations/1764720000000-recommendations-term-weight-inline.js';
import { RecommendationsRecordedRowsLean1764806400000 } from './migrations/1764806400000-recommendations-recorded-rows-lean.js';
import { RecommendationsAdTermWeights1764892800000 } from './migrations/1764892800000-recommendations-ad-term-weights.js';
import { RecommendationsWordIndexPlannedPerWrite1764979200000 } from './migrations/1764979200000-recommendations-word-index-planned-per-write.js';
import { RecommendationOutboxEntity } from './recommendation-outbox.entity.js';
import { RecommendationRequestEntity } from './recommendation-request.entity.js';
import { RecommendationEntity } from './recommendation.entity.js';
import { RECOMMENDATIONS_SCHEMA } from '#libs/catalog-core';

/**
 * The recommendations schema's DataSource: the service reads the catalog and records its
 * answers, the ops CLI imports the catalog (and runs the migrations first, as the service would).
 */
export function createRecommendationsDataSource(url: string, poolSize: number, applicationName = 'recommendations'): ServiceDataSource {
  return createServiceDataSource({
    url,
    schema: RECOMMENDATIONS_SCHEMA,
    entities: [AdEntity, RecommendationRequestEntity, RecommendationEntity, RecommendationOutboxEntity],
    migrations: [
      RecommendationsInitial1764460800000,
      RecommendationsSearchVectorMetadata1764547200000,
      RecommendationsAdTerms1764633600000,
      RecommendationsTermWeightInline1764720000000,
      RecommendationsRecordedRowsLean1764806400000,
      RecommendationsAdTermWeights1764892800000,
      RecommendationsWordIndexPlannedPerWrite1764979200000,
    ],
    poolSize,
    applicationName,
  });
}
