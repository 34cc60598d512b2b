import { sqlMigration } from '#libs/database';
import { AD_TERMS_REBUILD, FORGET, LEARN, triggerFunction } from './1764633600000-recommendations-ad-terms.js';

/** Each active ad's words with their weights (recommendations.term_weight), aligned arrays ordered by word. */
const weightsOf = (ads: string) =>
  `SELECT a.ad_id, array_agg(u.lexeme ORDER BY u.lexeme), array_agg(recommendations.term_weight(u.weights) ORDER BY u.lexeme)
     FROM ${ads} a, unnest(a.search_vector) u WHERE a.active GROUP BY a.ad_id`;

export const FORGET_WEIGHTS = `
    DELETE FROM recommendations.ad_term_weights w USING old_ads o WHERE o.active AND w.ad_id = o.ad_id;`;

export const LEARN_WEIGHTS = `
    INSERT INTO recommendations.ad_term_weights (ad_id, lexemes, weights) ${weightsOf('new_ads')};`;

/** What the UPDATE and DELETE triggers do with the words of old_ads, and what UPDATE and INSERT do with those of new_ads: every table of the word index. */
export const FORGET_ALL = `${FORGET}${FORGET_WEIGHTS}`;
export const LEARN_ALL = `${LEARN}${LEARN_WEIGHTS}`;

const FILL = `INSERT INTO recommendations.ad_term_weights (ad_id, lexemes, weights) ${weightsOf('recommendations.ads')}`;

/**
 * The word index rebuilt from the catalog (all its tables): what a bulk load runs after writing
 * ads with the triggers disabled (bench/catalog-load.ts), much faster than row by row.
 */
export const WORD_INDEX_REBUILD: readonly string[] = [...AD_TERMS_REBUILD, `TRUNCATE recommendations.ad_term_weights`, FILL];

/**
 * `ad_term_weights`: one row per active ad, its words and their weights as two aligned arrays,
 * kept by the same statement triggers as `ad_terms` (the functions replaced: the same bodies plus
 * this table). The search's rescoring reads a candidate's weights for the question's words there
 * (`array_position`, no unnest of its `search_vector` into a tuple store and no hash table per
 * candidate; docs/decisions/recommend-lean-recording-and-rescoring.md), and fetches
 * from `ads` only the ads it answers. The catalog is locked against writes while the table is
 * filled, so no import slips between the fill and the new trigger functions.
 */
export const RecommendationsAdTermWeights1764892800000 = sqlMigration(
  'RecommendationsAdTermWeights1764892800000',
  [
    `LOCK TABLE recommendations.ads IN SHARE MODE`,
    `CREATE TABLE recommendations.ad_term_weights (
       ad_id text PRIMARY KEY,
       lexemes text[] NOT NULL,
       weights real[] NOT NULL CHECK (cardinality(weights) = cardinality(lexemes))
     )`,
    triggerFunction('INSERT', LEARN_ALL, 'CREATE OR REPLACE'),
    triggerFunction('UPDATE', `${FORGET_ALL}\n${LEARN_ALL}`, 'CREATE OR REPLACE'),
    triggerFunction('DELETE', FORGET_ALL, 'CREATE OR REPLACE'),
    FILL,
  ],
  [
    triggerFunction('INSERT', LEARN, 'CREATE OR REPLACE'),
    triggerFunction('UPDATE', `${FORGET}\n${LEARN}`, 'CREATE OR REPLACE'),
    triggerFunction('DELETE', FORGET, 'CREATE OR REPLACE'),
    `DROP TABLE recommendations.ad_term_weights`,
  ],
);
