import { sqlMigration } from '#libs/database';
import { FORGET, LEARN, triggerFunction } from './1764633600000-recommendations-ad-terms.js';
import { FORGET_WEIGHTS, LEARN_WEIGHTS } from './1764892800000-recommendations-ad-term-weights.js';

/**
 * The statements of `body` each run by EXECUTE: planned at each run of the trigger, with the
 * sizes of the transition tables and of the word index at that moment. The statements are the
 * same as before, word for word.
 */
const plannedPerRun = (body: string) =>
  body
    .split(';')
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '')
    .map((statement) => `EXECUTE $statement$ ${statement} $statement$;`)
    .join('\n       ');

const INSERT_BODY = `${LEARN}${LEARN_WEIGHTS}`;
const UPDATE_BODY = `${FORGET}${FORGET_WEIGHTS}\n${LEARN}${LEARN_WEIGHTS}`;
const DELETE_BODY = `${FORGET}${FORGET_WEIGHTS}`;

/**
 * The word-index triggers (migrations 1764633600000 and 1764892800000) run their statements
 * through EXECUTE instead of as static PL/pgSQL statements. A static statement without variables
 * is planned once per session, at the trigger's first run, and that plan is kept for as long as
 * the session lives (until an ANALYZE or DDL of the tables invalidates it): planned while the
 * catalog was small or empty (the first import of a session, or the UPDATE trigger of an
 * INSERT … ON CONFLICT chunk of new ads, whose old_ads is empty), the DELETE of a changed ad's words
 * scanned all of `ad_terms_rank_idx` for each ad (only ad_id as the index condition), about 12 ms
 * per ad at 20,000 ads. Planned at each run, each statement fits the batch and the catalog it
 * meets (docs/decisions/catalog-word-index.md). Same statements, same rows: only their plans change.
 */
export const RecommendationsWordIndexPlannedPerWrite1764979200000 = sqlMigration(
  'RecommendationsWordIndexPlannedPerWrite1764979200000',
  [
    triggerFunction('INSERT', plannedPerRun(INSERT_BODY), 'CREATE OR REPLACE'),
    triggerFunction('UPDATE', plannedPerRun(UPDATE_BODY), 'CREATE OR REPLACE'),
    triggerFunction('DELETE', plannedPerRun(DELETE_BODY), 'CREATE OR REPLACE'),
  ],
  [
    triggerFunction('INSERT', INSERT_BODY, 'CREATE OR REPLACE'),
    triggerFunction('UPDATE', UPDATE_BODY, 'CREATE OR REPLACE'),
    triggerFunction('DELETE', DELETE_BODY, 'CREATE OR REPLACE'),
  ],
);
