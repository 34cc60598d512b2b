import { sqlMigration } from '#libs/database';

const signature = `recommendations.term_weight(weights text[]) RETURNS real LANGUAGE sql IMMUTABLE PARALLEL SAFE`;

/**
 * term_weight (migration 1764633600000) as one expression without FROM, so the planner inlines it
 * into the statements that call it instead of running a SQL function per word of each rescored ad
 * (executor set-up and tear-down of its body each time: a third of the search's execution). Same
 * value for every input: the best field's weight (A 1.0, B 0.4, C 0.15, else 0.1; 0.1 for no
 * position), times 1 + ln(positions)/10; the word index keeps the weights it holds.
 */
export const RecommendationsTermWeightInline1764720000000 = sqlMigration(
  'RecommendationsTermWeightInline1764720000000',
  [
    `CREATE OR REPLACE FUNCTION ${signature} AS $$
    SELECT ((CASE WHEN 'A' = ANY (weights) THEN 1.0 WHEN 'B' = ANY (weights) THEN 0.4 WHEN 'C' = ANY (weights) THEN 0.15 ELSE 0.1 END)
            * (1 + ln(greatest(cardinality(weights), 1)) / 10))::real
  $$`,
  ],
  [
    `CREATE OR REPLACE FUNCTION ${signature} AS $$
    SELECT (coalesce(max(CASE w WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4 WHEN 'C' THEN 0.15 ELSE 0.1 END), 0.1)
            * (1 + ln(greatest(cardinality(weights), 1)) / 10))::real
      FROM unnest(weights) AS w
  $$`,
  ],
);
