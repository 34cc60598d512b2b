import {
  RECOMMEND_DEFAULT_LATENCY_BUDGET_MS,
  RECOMMEND_MAX_LATENCY_BUDGET_MS,
  RECOMMEND_MIN_LATENCY_BUDGET_MS,
  type RecommendConversationMessage,
} from '#libs/contracts';

/**
 * The pure rules of ranking and timing (unit tested in test/unit/recommendations-ranking.spec.ts).
 *
 * Relevance. PostgreSQL full-text search ranks each active ad that shares at least one word
 * (lexeme, `english` configuration: stemmed, stop words dropped) with the query or the recent
 * conversation:
 *
 *   strength = rank_cd(ad, query) / √(query lexemes) + w · rank_cd(ad, context) / √(context lexemes)
 *
 * where rank_cd = `ts_rank_cd(search_vector, q, 1)`: cover density over the ad's weighted text
 * (title A = 1.0, keywords B = 0.4, summaries and short description C = 0.2), divided by
 * 1 + log(ad length) so long copy cannot win by repetition; the words of q are OR-ed, so a
 * question matches on any of its words, and dividing by the square root of their number keeps
 * a long question's score comparable with a short one's without letting one word of ten count
 * as a full match. w = RECOMMENDATIONS_CONTEXT_WEIGHT (0.3): history counts less than the query.
 *
 *   contextual_relevance_score = 100 · strength / (strength + 0.2), rounded to 0.1
 *
 * a saturating map onto 0–100: strength 0.2 scores 50, 0.8 scores 80 (the title and keywords
 * of an ad name the query's words), 0.05 scores 20. Ads under RECOMMENDATIONS_MIN_SCORE (10) are
 * never recommended; at most RECOMMEND_MAX_RESULTS are, best first (ties by ad_id).
 */
export const HALF_SCORE_STRENGTH = 0.2;

export function relevanceScore(strength: number): number {
  if (!Number.isFinite(strength) || strength <= 0) return 0;
  const score = Math.round((1000 * strength) / (strength + HALF_SCORE_STRENGTH)) / 10;
  return Math.min(100, Math.max(0, score));
}

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
 * `statement_timeout` of the search: what is left of the answer deadline, less a reserve for
 * recording the answer (a fifth of what is left, at most 50 ms); at least 1 ms.
 */
export function searchTimeoutMs(remainingMs: number): number {
  if (remainingMs <= 1) return 1;
  return Math.max(1, Math.floor(remainingMs - Math.min(50, remainingMs / 5)));
}
