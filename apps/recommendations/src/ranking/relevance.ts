import {
  RECOMMEND_DEFAULT_LATENCY_BUDGET_MS,
  RECOMMEND_MAX_LATENCY_BUDGET_MS,
  RECOMMEND_MIN_LATENCY_BUDGET_MS,
} from '#libs/contracts';
import type { RecommendConversationMessage } from '#libs/recommend-request';

/**
 * The pure rules of ranking and timing (unit tested in test/unit/recommendations-ranking.spec.ts).
 *
 * Relevance. A question and the recent conversation are split into words (lexemes, `english`
 * configuration: stemmed, stop words dropped). An active ad that shares at least one of them is
 * scored in the vector-space way, each word weighted by its rarity in the catalog on both sides
 * (the question's and the ad's), hence rarity²:
 *
 *   strength = Σ_query words   rarity(word)² · weight(word, ad) / √(query words)
 *            + w · Σ_context words rarity(word)² · weight(word, ad) / √(context words)
 *
 * - weight(word, ad) (recommendations.term_weight in SQL): the ad's best field holding the word —
 *   title 1.0, keywords 0.4, summaries and short description 0.15 — times 1 + ln(repetitions)/10;
 * - rarity(word) = wordRarity(ads having the word, active ads): 1 for a word in at most one ad in
 *   RARITY_FULL_AT, falling to 0 for a word in every ad, so words most ads share ("new",
 *   "premium") weigh almost nothing and the product words of the question decide;
 * - dividing by the square root of the number of words keeps a long question's score comparable
 *   with a short one's without letting one word of ten count as a full match (words no ad has
 *   count there too); w = RECOMMENDATIONS_CONTEXT_WEIGHT (0.3): history counts less than the query.
 *
 *   contextual_relevance_score = 100 · strength / (strength + 0.2), rounded to 0.1
 *
 * a saturating map onto 0–100: strength 0.2 scores 50, 0.8 scores 80 (the title and keywords
 * of an ad name the query's rare words), 0.05 scores 20. Ads under RECOMMENDATIONS_MIN_SCORE (10)
 * are never recommended; at most RECOMMEND_MAX_RESULTS are, best first (ties by ad_id).
 *
 * Retrieval is bounded (AdSearchRepository): for each word only its CANDIDATES_PER_WORD heaviest
 * ads are candidates, and the CANDIDATES_RESCORED best candidates (by the sum over the words that
 * found them) are scored exactly; so the work per question does not grow with the catalog. An
 * ad heavy in several words of the question is found through the rarest of them.
 */
export const RARITY_FULL_AT = 1000;
export const CANDIDATES_PER_WORD = 40;
export const CANDIDATES_RESCORED = 12;

/**
 * A word's rarity in (0, 1]: ln(N / ads) / ln(min(N, RARITY_FULL_AT)), at most 1, where N is the
 * number of active ads and `ads` how many of them have the word (the SQL of AdSearchRepository
 * computes the same from lexeme_stats and catalog_stats). Depends on the word's share of the
 * catalog, not on the catalog's size, past RARITY_FULL_AT ads.
 */
export function wordRarity(ads: number, catalogAds: number): number {
  if (ads <= 0 || catalogAds <= 0 || ads >= catalogAds) return 0;
  return Math.min(1, Math.log(catalogAds / ads) / Math.log(Math.max(2, Math.min(catalogAds, RARITY_FULL_AT))));
}

export const HALF_SCORE_STRENGTH = 0.2;

export function relevanceScore(strength: number): number {
  if (!Number.isFinite(strength) || strength <= 0) return 0;
  const score = Math.round((1000 * strength) / (strength + HALF_SCORE_STRENGTH)) / 10;
  return Math.min(100, Math.max(0, score));
}

/**
 * relevanceScore as an SQL expression of a float8 `strength` (the answer's statement scores and
 * filters its candidates itself): Math.round(x) of a positive x is floor(x + 0.5), and both sides
 * compute in IEEE doubles, so the values are the same (test/integration/recommendations-prepared.spec.ts).
 */
export const SCORE_SQL = (strength: string) =>
  `CASE WHEN ${strength} > 0 AND ${strength} < 'Infinity'::float8 ` +
  `THEN least(100, greatest(0, floor(1000 * ${strength} / (${strength} + ${HALF_SCORE_STRENGTH}) + 0.5) / 10)) ELSE 0 END`;

/** User messages of the history that count as context, and how much of each. */
export const CONTEXT_MESSAGES = 3;
export const CONTEXT_MAX_CHARACTERS = 2000;

/**
 * The conversation context searched beside the query: the content of the last few messages
 * whose role is `user` (the query itself excluded when the history repeats it), newest first,
 * cut to CONTEXT_MAX_CHARACTERS. Assistant and system messages are not the user's intent.
 */
export function conversationContext(messages: RecommendConversationMessage[] | undefined, query: string): string {
  if (!messages || messages.length === 0) return '';
  const normalizedQuery = query.trim();
  const picked: string[] = [];
  for (let i = messages.length - 1; i >= 0 && picked.length < CONTEXT_MESSAGES; i--) {
    const { role, content } = messages[i];
    if (role.trim().toLowerCase() !== 'user') continue;
    const text = content.trim();
    if (text === '' || text === normalizedQuery) continue;
    picked.push(text);
  }
  return picked.join('\n').slice(0, CONTEXT_MAX_CHARACTERS);
}

/** The budget actually applied: the request's, clamped to the contract's bounds. */
export function effectiveBudgetMs(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return RECOMMEND_DEFAULT_LATENCY_BUDGET_MS;
  return Math.min(RECOMMEND_MAX_LATENCY_BUDGET_MS, Math.max(RECOMMEND_MIN_LATENCY_BUDGET_MS, Math.floor(requested)));
}

/**
 * How long the service may work on an answer: the budget less a margin for the reply to travel
 * back over NATS (a tenth of the budget, at most 25 ms). After that it answers `unavailable`.
 */
export function answerDeadlineMs(budgetMs: number): number {
  return Math.max(1, budgetMs - Math.min(25, Math.ceil(budgetMs / 10)));
}

/**
 * `statement_timeout` of the answer's statement (the search and the recording, one statement):
 * what is left of the answer deadline, less a reserve (a fifth of what is left, at most 50 ms) so
 * that PostgreSQL cancels a late statement, recording nothing, before the service gives up on it;
 * at least 1 ms.
 */
export function searchTimeoutMs(remainingMs: number): number {
  if (remainingMs <= 1) return 1;
  return Math.max(1, Math.floor(remainingMs - Math.min(50, remainingMs / 5)));
}
