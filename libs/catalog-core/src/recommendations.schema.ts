/** The schema the recommendations service owns; the ops CLI writes its catalog there (catalog-sql.ts). */
export const RECOMMENDATIONS_SCHEMA = 'recommendations';

/**
 * The schema's migrations, by the names TypeORM records in `recommendations.migrations`: the list
 * of createRecommendationsDataSource (#libs/catalog; test/unit/recommendations-catalog.spec.ts
 * holds the two equal). The ops CLI writes the catalog with plain SQL once all of them have run.
 */
export const RECOMMENDATIONS_MIGRATIONS = [
  'RecommendationsInitial1764460800000',
  'RecommendationsSearchVectorMetadata1764547200000',
  'RecommendationsAdTerms1764633600000',
  'RecommendationsTermWeightInline1764720000000',
  'RecommendationsRecordedRowsLean1764806400000',
  'RecommendationsAdTermWeights1764892800000',
  'RecommendationsWordIndexPlannedPerWrite1764979200000',
] as const;

/**
 * PostgreSQL text-search configuration of the catalog (generated column and queries alike):
 * `english` stems ("shoes" finds "shoe", "running" finds "run") and drops stop words, which
 * suits natural-language questions; `simple` would only lower-case. It must equal the
 * configuration of the generated `search_vector` column (migration 1764460800000, AdEntity).
 */
export const CATALOG_TEXT_SEARCH_CONFIG = 'english';
