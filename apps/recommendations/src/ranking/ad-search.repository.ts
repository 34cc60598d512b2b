import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_TEXT_SEARCH_CONFIG, type CatalogAd } from '#libs/catalog';
import { CANDIDATES_PER_WORD, CANDIDATES_RESCORED, RARITY_FULL_AT } from './relevance.js';

/** An ad found for a query (the catalog's fields a recommendation shows), with its ranking strength (see relevance.ts for the formula). */
export interface AdCandidate extends Omit<CatalogAd, 'keywords' | 'active'> {
  strength: number;
}

const CONFIG = `'${CATALOG_TEXT_SEARCH_CONFIG}'::regconfig`;

/**
 * Ranked retrieval over the catalog's word index (tables ad_terms, ad_term_weights, lexeme_stats,
 * catalog_stats, kept in step with `ads` by triggers), in one statement whose cost depends on the question, not
 * on the catalog's size:
 *
 * 1. words: the lexemes of the query and of the context (PostgreSQL parses both: never string
 *    building here), each with its factor 1/√n (query) or w/√m (context), summed when in both;
 * 2. weighted: each word's factor × rarity² (relevance.ts), from its document frequency;
 * 3. candidates: for each word, the first CANDIDATES_PER_WORD rows of its range of
 *    ad_terms_rank_idx (its heaviest ads: an index-only scan that stops there), summed per ad;
 *    the CANDIDATES_RESCORED best go on;
 * 4. rescored: those ads' strength, exactly, over all the words, from their weights in
 *    ad_term_weights (the weight of each word of the ad, as in ad_terms; a word the ad lacks adds
 *    nothing), summed in the order of `weighted`; the best `limit` (ties by ad_id), and only
 *    their rows read from `ads`.
 *
 * Each argument is an SQL expression: a bound parameter, or a literal quoted by the caller.
 */
export function searchStatement(sql: { query: string; context: string; contextWeight: string; limit: string }): string {
  return `WITH parsed AS (
         SELECT to_tsvector(${CONFIG}, ${sql.query}::text) AS q, to_tsvector(${CONFIG}, ${sql.context}::text) AS c
       ), words AS (
         SELECT lexeme, sum(f) AS f FROM (
           SELECT unnest(tsvector_to_array(p.q)) AS lexeme, 1 / sqrt(greatest(length(p.q), 1)) AS f FROM parsed p
           UNION ALL
           SELECT unnest(tsvector_to_array(p.c)), ${sql.contextWeight}::float8 / sqrt(greatest(length(p.c), 1)) FROM parsed p
         ) w
         WHERE f > 0
         GROUP BY lexeme
       ), weighted AS (
         SELECT w.lexeme,
                w.f * power(least(1, ln(n.ads::float8 / s.ads) / ln(greatest(2, least(n.ads, ${RARITY_FULL_AT}))::float8)), 2) AS g
           FROM words w
           JOIN recommendations.lexeme_stats s ON s.lexeme = w.lexeme AND s.ads > 0,
                (SELECT ads FROM recommendations.catalog_stats LIMIT 1) n
       ), candidates AS (
         SELECT p.ad_id, sum(wt.g * p.weight) AS pre
           FROM weighted wt
          CROSS JOIN LATERAL (
                SELECT t.ad_id, t.weight FROM recommendations.ad_terms t
                 WHERE t.lexeme = wt.lexeme
                 ORDER BY t.weight DESC, t.ad_id
                 LIMIT ${CANDIDATES_PER_WORD}) p
          WHERE wt.g > 0
          GROUP BY p.ad_id
          ORDER BY pre DESC, p.ad_id
          LIMIT ${CANDIDATES_RESCORED}
       ), rescored AS (
         SELECT cd.ad_id, coalesce(sum(wt.g * w.weights[array_position(w.lexemes, wt.lexeme)]), 0) AS strength
           FROM candidates cd
           JOIN recommendations.ad_term_weights w ON w.ad_id = cd.ad_id
          CROSS JOIN weighted wt
          GROUP BY cd.ad_id
          ORDER BY strength DESC, cd.ad_id
          LIMIT ${sql.limit}
       )
       SELECT a.ad_id, a.product_id, a.product_title, a.weave_summary, a.tail_summary, a.creative_input, a.landing_url, r.strength
         FROM rescored r
         JOIN recommendations.ads a ON a.ad_id = r.ad_id
        WHERE a.active
        ORDER BY r.strength DESC, a.ad_id`;
}

const SEARCH = searchStatement({ query: '$1', context: '$2', contextWeight: '$3', limit: '$4' });

/**
 * The search as one statement of bound parameters (what the bench times alone); the service
 * sends the same SQL inside the statement that answers (RecommendationRepository.answer).
 */
@Injectable()
export class AdSearchRepository {
  async search(manager: EntityManager, input: { query: string; context: string; contextWeight: number; limit: number }): Promise<AdCandidate[]> {
    // Raw SQL: the hot path of every recommendation, one statement of tsvector functions, LATERAL
    // index scans with LIMIT and aggregates; a query builder would only wrap these same SQL strings.
    const rows: (Omit<AdCandidate, 'strength'> & { strength: number | string })[] = await manager.query(SEARCH, [
      input.query,
      input.context,
      input.contextWeight,
      input.limit,
    ]);
    return rows.map((row) => ({ ...row, strength: Number(row.strength) }));
  }
}
