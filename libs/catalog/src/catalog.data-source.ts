import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '#libs/database';
import { RecommendationsInitial1764460800000 } from './migrations/1764460800000-recommendations-initial.js';

/** The schema the recommendations service owns; the ops CLI writes its catalog through this lib. */
export const RECOMMENDATIONS_SCHEMA = 'recommendations';

/**
 * PostgreSQL text-search configuration of the catalog (generated column and queries alike):
 * `english` stems ("shoes" finds "shoe", "running" finds "run") and drops stop words, which
 * suits natural-language questions; `simple` would only lower-case. It must equal the
 * configuration of the generated `search_vector` column (migration 1764460800000).
 */
export const CATALOG_TEXT_SEARCH_CONFIG = 'english';

/** The recommendations schema's DataSource: the service reads and records, the ops CLI imports. */
export function createRecommendationsDataSource(url: string, poolSize: number, applicationName = 'recommendations'): DataSource {
  return createServiceDataSource({
    url,
    schema: RECOMMENDATIONS_SCHEMA,
    entities: [],
    migrations: [RecommendationsInitial1764460800000],
    poolSize,
    applicationName,
  });
}
