import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_TEXT_SEARCH_CONFIG } from '#libs/catalog';

/** An ad found for a query, with its ranking strength (see relevance.ts for the formula). */
export interface AdCandidate {
  ad_id: string;
  product_id: string;
  product_title: string;
  weave_summary: string | null;
  tail_summary: string | null;
  creative_input: { short_description?: string; [key: string]: unknown };
  landing_url: string;
  strength: number;
}

const CONFIG = `'${CATALOG_TEXT_SEARCH_CONFIG}'::regconfig`;

/** An OR of the text's lexemes (plainto_tsquery ANDs them), or NULL when it has none. */
const orQuery = (param: string) =>
  `CASE WHEN length(to_tsvector(${CONFIG}, ${param})) > 0
        THEN replace(plainto_tsquery(${CONFIG}, ${param})::text, ' & ', ' | ')::tsquery END`;

/**
 * Full-text search of the active catalog (GIN index on `ads.search_vector`). The query and the
 * context are turned into tsqueries by PostgreSQL itself (never by string building here), and
 * ranked in one statement: strength = ts_rank_cd(query)/√n + weight · ts_rank_cd(context)/√m.
 */
@Injectable()
export class AdSearchRepository {
  async search(manager: EntityManager, input: { query: string; context: string; contextWeight: number; limit: number }): Promise<AdCandidate[]> {
    // Raw SQL: the hot path of every recommendation, one statement of tsquery/ts_rank_cd expressions
    // over the GIN index; a query builder would only wrap these same SQL strings.
    const rows: (Omit<AdCandidate, 'strength'> & { strength: number | string })[] = await manager.query(
      `WITH terms AS (
         SELECT ${orQuery('$1::text')} AS q, length(to_tsvector(${CONFIG}, $1::text)) AS qn,
                ${orQuery('$2::text')} AS c, length(to_tsvector(${CONFIG}, $2::text)) AS cn
       )
       SELECT a.ad_id, a.product_id, a.product_title, a.weave_summary, a.tail_summary, a.creative_input, a.landing_url,
              coalesce(ts_rank_cd(a.search_vector, t.q, 1) / sqrt(nullif(t.qn, 0)), 0)
                + $3::float8 * coalesce(ts_rank_cd(a.search_vector, t.c, 1) / sqrt(nullif(t.cn, 0)), 0) AS strength
         FROM terms t
         JOIN recommendations.ads a ON a.search_vector @@ t.q OR a.search_vector @@ t.c
        WHERE a.active
        ORDER BY strength DESC, a.ad_id
        LIMIT $4`,
      [input.query, input.context, input.contextWeight, input.limit],
    );
    return rows.map((row) => ({ ...row, strength: Number(row.strength) }));
  }
}
