/** The schema the recommendations service owns; the ops CLI writes its catalog through this lib. */
export const RECOMMENDATIONS_SCHEMA = 'recommendations';

/**
 * PostgreSQL text-search configuration of the catalog (generated column and queries alike):
 * `english` stems ("shoes" finds "shoe", "running" finds "run") and drops stop words, which
 * suits natural-language questions; `simple` would only lower-case. It must equal the
 * configuration of the generated `search_vector` column (migration 1764460800000, AdEntity).
 */
export const CATALOG_TEXT_SEARCH_CONFIG = 'english';
