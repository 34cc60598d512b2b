import { sqlMigration } from '#libs/database';
import { triggerFunction } from './1764633600000-recommendations-ad-terms.js';
import { FORGET_ALL, LEARN_ALL } from './1764892800000-recommendations-ad-term-weights.js';

/**
 * The statements of `body`, word for word, each run by EXECUTE: planned at each run of the
 * trigger, for the sizes of the transition table and of the word index at that moment.
 */
const plannedPerRun = (body: string) =>
  body
    .split(';')
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '')
    .map((statement) => `EXECUTE $statement$ ${statement} $statement$;`)
    .join('\n       ');

/**
 * The statements that forget the words of old_ads (the UPDATE and DELETE triggers of migrations
 * 1764633600000 and 1764892800000) run by EXECUTE instead of as static PL/pgSQL statements. A
 * static statement without variables is planned once per session, at the trigger's first run,
 * and that plan is kept until an ANALYZE or DDL of its tables invalidates it. Planned while the
 * catalog was small or empty, or when old_ads was empty (the UPDATE trigger of an
 * INSERT … ON CONFLICT chunk of new ads), the DELETE from ad_terms kept a plan that scanned all of
 * `ad_terms_rank_idx` for each changed ad (only ad_id as its condition): about 3 ms per changed ad
 * at 20,000 ads, 33 ms at 100,000. Planned at each run, it probes the index by its whole key (or
 * hashes a small ad_terms). Same statements, same rows: only their plans change
 * (docs/decisions/catalog-word-index.md). The statements that learn the words of new_ads join no
 * table (inserts from new_ads, an upsert by primary key): they stay static, and the INSERT
 * trigger is unchanged.
 */
export const RecommendationsWordIndexPlannedPerWrite1764979200000 = sqlMigration(
  'RecommendationsWordIndexPlannedPerWrite1764979200000',
  [
    triggerFunction('UPDATE', `${plannedPerRun(FORGET_ALL)}\n${LEARN_ALL}`, 'CREATE OR REPLACE'),
    triggerFunction('DELETE', plannedPerRun(FORGET_ALL), 'CREATE OR REPLACE'),
  ],
  [
    triggerFunction('UPDATE', `${FORGET_ALL}\n${LEARN_ALL}`, 'CREATE OR REPLACE'),
    triggerFunction('DELETE', FORGET_ALL, 'CREATE OR REPLACE'),
  ],
);
