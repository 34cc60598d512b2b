import { sqlMigration } from '#libs/database';

/** The word statistics the search reads, maintained by the triggers below. */
const TABLES = [
  // One row per (word, active ad): the word's weight in that ad. Read through its index only, a
  // bounded number of rows per word of a question, best first.
  `CREATE TABLE recommendations.ad_terms (
     lexeme text NOT NULL,
     weight real NOT NULL,
     ad_id text NOT NULL
   )`,
  // How many active ads have each word (its document frequency), and how many active ads there are.
  `CREATE TABLE recommendations.lexeme_stats (lexeme text PRIMARY KEY, ads integer NOT NULL CHECK (ads >= 0))`,
  `CREATE TABLE recommendations.catalog_stats (id boolean PRIMARY KEY DEFAULT true CHECK (id), ads integer NOT NULL CHECK (ads >= 0))`,
  `INSERT INTO recommendations.catalog_stats (ads) VALUES (0)`,
];

/**
 * A word's weight in an ad, from the weights of its positions in `search_vector`: its best field
 * (title A 1.0, keywords B 0.4, summaries and short description C 0.15, anything else 0.1), a
 * little more for each repetition (1 + ln(positions)/10).
 */
const TERM_WEIGHT = `
  CREATE FUNCTION recommendations.term_weight(weights text[]) RETURNS real
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (coalesce(max(CASE w WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4 WHEN 'C' THEN 0.15 ELSE 0.1 END), 0.1)
            * (1 + ln(greatest(cardinality(weights), 1)) / 10))::real
      FROM unnest(weights) AS w
  $$`;

/** Removes the words of the active ads of transition table old_ads. */
export const FORGET = `
    DELETE FROM recommendations.ad_terms t
     USING (SELECT o.ad_id, u.lexeme, recommendations.term_weight(u.weights) AS weight
              FROM old_ads o, unnest(o.search_vector) u WHERE o.active) d
     WHERE t.lexeme = d.lexeme AND t.weight = d.weight AND t.ad_id = d.ad_id;
    UPDATE recommendations.lexeme_stats s SET ads = s.ads - d.ads
      FROM (SELECT u.lexeme, count(*) AS ads FROM old_ads o, unnest(o.search_vector) u WHERE o.active GROUP BY u.lexeme) d
     WHERE s.lexeme = d.lexeme;
    UPDATE recommendations.catalog_stats SET ads = ads - (SELECT count(*) FROM old_ads WHERE active);`;

/** Adds the words of the active ads of transition table new_ads. */
export const LEARN = `
    INSERT INTO recommendations.ad_terms (lexeme, weight, ad_id)
    SELECT u.lexeme, recommendations.term_weight(u.weights), n.ad_id FROM new_ads n, unnest(n.search_vector) u WHERE n.active;
    INSERT INTO recommendations.lexeme_stats AS s (lexeme, ads)
    SELECT u.lexeme, count(*) FROM new_ads n, unnest(n.search_vector) u WHERE n.active GROUP BY u.lexeme ORDER BY u.lexeme
        ON CONFLICT (lexeme) DO UPDATE SET ads = s.ads + excluded.ads;
    UPDATE recommendations.catalog_stats SET ads = ads + (SELECT count(*) FROM new_ads WHERE active);`;

/**
 * The word index rebuilt from the catalog in a few set-based statements (the index built after
 * its rows): what this migration does for the ads already there. A bulk load runs the current
 * one, WORD_INDEX_REBUILD (migration 1764892800000 adds a table to it).
 */
export const AD_TERMS_REBUILD: readonly string[] = [
  `TRUNCATE recommendations.ad_terms, recommendations.lexeme_stats`,
  `DROP INDEX IF EXISTS recommendations.ad_terms_rank_idx`,
  `INSERT INTO recommendations.ad_terms (lexeme, weight, ad_id)
   SELECT u.lexeme, recommendations.term_weight(u.weights), a.ad_id FROM recommendations.ads a, unnest(a.search_vector) u WHERE a.active`,
  `CREATE UNIQUE INDEX ad_terms_rank_idx ON recommendations.ad_terms (lexeme, weight DESC, ad_id)`,
  `INSERT INTO recommendations.lexeme_stats (lexeme, ads)
   SELECT u.lexeme, count(*) FROM recommendations.ads a, unnest(a.search_vector) u WHERE a.active GROUP BY u.lexeme`,
  `UPDATE recommendations.catalog_stats SET ads = (SELECT count(*) FROM recommendations.ads WHERE active)`,
];

/**
 * Statement triggers (transition tables: one set-based statement per import batch, not one per
 * ad). Writers of the catalog take one transaction-scoped advisory lock first, so two imports at
 * once take turns instead of deadlocking on the counters of the words they share.
 */
export type CatalogWrite = 'INSERT' | 'UPDATE' | 'DELETE';

/** The function of the trigger of `operation` (`create`: CREATE, or CREATE OR REPLACE in a later migration). */
export const triggerFunction = (operation: CatalogWrite, body: string, create = 'CREATE') =>
  `${create} FUNCTION recommendations.ads_${operation.toLowerCase()}_terms() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(hashtext('recommendations.ad_terms'));
       ${body}
       RETURN NULL;
     END $$`;

const trigger = (operation: CatalogWrite, body: string) => {
  const name = `ads_${operation.toLowerCase()}_terms`;
  const transition = { INSERT: 'NEW TABLE AS new_ads', UPDATE: 'OLD TABLE AS old_ads NEW TABLE AS new_ads', DELETE: 'OLD TABLE AS old_ads' }[operation];
  return [
    triggerFunction(operation, body),
    `CREATE TRIGGER ${name} AFTER ${operation} ON recommendations.ads REFERENCING ${transition} FOR EACH STATEMENT EXECUTE FUNCTION recommendations.${name}()`,
  ];
};

/**
 * The word index of the catalog (see AdSearchRepository): `ad_terms` holds each word of each
 * active ad with its weight, ordered by word and weight, so the best ads for a word are the first
 * rows of its range whatever the catalog's size; `lexeme_stats` and `catalog_stats` give each
 * word's rarity (inverse document frequency). Triggers on `ads` keep them in step with every
 * write of the catalog. The GIN index on `search_vector` goes: no query reads it any more.
 */
export const RecommendationsAdTerms1764633600000 = sqlMigration(
  'RecommendationsAdTerms1764633600000',
  [
    ...TABLES,
    TERM_WEIGHT,
    ...trigger('INSERT', LEARN),
    ...trigger('UPDATE', `${FORGET}\n${LEARN}`),
    ...trigger('DELETE', FORGET),
    // The ads already there (a migrated catalog).
    ...AD_TERMS_REBUILD,
    `DROP INDEX recommendations.ads_search_idx`,
  ],
  [
    `CREATE INDEX ads_search_idx ON recommendations.ads USING gin (search_vector)`,
    ...['insert', 'update', 'delete'].flatMap((op) => [
      `DROP TRIGGER IF EXISTS ads_${op}_terms ON recommendations.ads`,
      `DROP FUNCTION IF EXISTS recommendations.ads_${op}_terms()`,
    ]),
    `DROP FUNCTION IF EXISTS recommendations.term_weight(text[])`,
    ...['catalog_stats', 'lexeme_stats', 'ad_terms'].map((table) => `DROP TABLE IF EXISTS recommendations.${table}`),
  ],
);
