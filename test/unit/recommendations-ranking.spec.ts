import fc from 'fast-check';
import { RECOMMEND_DEFAULT_LATENCY_BUDGET_MS, RECOMMEND_MAX_LATENCY_BUDGET_MS, RECOMMEND_MIN_LATENCY_BUDGET_MS } from '#libs/contracts';
import {
  CONTEXT_MAX_CHARACTERS,
  HALF_SCORE_STRENGTH,
  RARITY_FULL_AT,
  answerDeadlineMs,
  conversationContext,
  effectiveBudgetMs,
  relevanceScore,
  searchTimeoutMs,
  wordRarity,
} from '../../apps/recommendations/src/ranking/relevance.js';

/** The pure rules behind contextual_relevance_score, the conversation context and the latency budget. */
describe('relevanceScore', () => {
  it('maps strength onto 0–100 as 100·s/(s+0.2), rounded to 0.1', () => {
    expect(relevanceScore(0)).toBe(0);
    expect(relevanceScore(HALF_SCORE_STRENGTH)).toBe(50);
    expect(relevanceScore(0.8)).toBe(80);
    expect(relevanceScore(0.05)).toBe(20);
    expect(relevanceScore(1 / 30)).toBe(14.3);
  });

  it('is 0 for nothing, negative or not a number, and stays below 100 however strong', () => {
    expect(relevanceScore(-1)).toBe(0);
    expect(relevanceScore(Number.NaN)).toBe(0);
    expect(relevanceScore(Number.POSITIVE_INFINITY)).toBe(0);
    expect(relevanceScore(1e9)).toBe(100);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e6, noNaN: true }), (s) => {
        const score = relevanceScore(s);
        return score >= 0 && score <= 100 && Math.round(score * 10) === score * 10;
      }),
    );
  });

  it('never reverses the order of two strengths (ranking by strength = ranking by score)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }), (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        return relevanceScore(low) <= relevanceScore(high);
      }),
    );
  });
});

describe('wordRarity', () => {
  it('is 1 for a word in at most one ad in RARITY_FULL_AT, 0 for a word in every ad, in between by the log of its share', () => {
    expect(wordRarity(1, 1_000_000)).toBe(1);
    expect(wordRarity(1_000, 1_000_000)).toBe(1);
    expect(wordRarity(1_000_000, 1_000_000)).toBe(0);
    expect(wordRarity(0, 1_000_000)).toBe(0);
    expect(wordRarity(100_000, 1_000_000)).toBeCloseTo(1 / 3, 10);
    // A small catalog: its own size is the scale (a word in 1 of 24 ads is as rare as can be).
    expect(wordRarity(1, 24)).toBe(1);
    expect(wordRarity(12, 24)).toBeCloseTo(Math.log(2) / Math.log(24), 10);
  });

  it('depends on the share of the catalog only, past RARITY_FULL_AT ads, and falls as the share grows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 100 }), (per, scale, more) => {
        const catalog = RARITY_FULL_AT * scale;
        const share = Math.min(catalog, per * scale);
        const same = Math.abs(wordRarity(share, catalog) - wordRarity(share * more, catalog * more)) < 1e-9;
        const falls = wordRarity(share, catalog) >= wordRarity(Math.min(catalog, share + scale), catalog);
        const bounded = wordRarity(share, catalog) >= 0 && wordRarity(share, catalog) <= 1;
        return same && falls && bounded;
      }),
    );
  });
});

describe('conversationContext', () => {
  it('takes the last three user messages, newest first, without the query itself', () => {
    const messages = [
      { role: 'user', content: 'oldest question' },
      { role: 'user', content: 'about laptops' },
      { role: 'assistant', content: 'assistant words are not intent' },
      { role: 'system', content: 'you are helpful' },
      { role: 'User', content: ' for college ' },
      { role: 'user', content: 'which one is lightest?' },
      { role: 'user', content: '   ' },
    ];
    expect(conversationContext(messages, 'which one is lightest?')).toBe('for college\nabout laptops\noldest question');
    expect(conversationContext([...messages, { role: 'user', content: 'newest' }], 'q')).toBe('newest\nwhich one is lightest?\nfor college');
  });

  it('is empty without history or without user messages, and bounded in length', () => {
    expect(conversationContext(undefined, 'q')).toBe('');
    expect(conversationContext([], 'q')).toBe('');
    expect(conversationContext([{ role: 'assistant', content: 'laptops' }], 'q')).toBe('');
    const long = conversationContext([{ role: 'user', content: 'x'.repeat(10 * CONTEXT_MAX_CHARACTERS) }], 'q');
    expect(long).toHaveLength(CONTEXT_MAX_CHARACTERS);
  });
});

describe('latency budget', () => {
  it('defaults and clamps the budget to the contract bounds', () => {
    expect(effectiveBudgetMs(undefined)).toBe(RECOMMEND_DEFAULT_LATENCY_BUDGET_MS);
    expect(effectiveBudgetMs(Number.NaN)).toBe(RECOMMEND_DEFAULT_LATENCY_BUDGET_MS);
    expect(effectiveBudgetMs(1)).toBe(RECOMMEND_MIN_LATENCY_BUDGET_MS);
    expect(effectiveBudgetMs(10 ** 9)).toBe(RECOMMEND_MAX_LATENCY_BUDGET_MS);
    expect(effectiveBudgetMs(250.9)).toBe(250);
  });

  it('answers before the budget ends (a reply margin of a tenth, at most 25 ms)', () => {
    expect(answerDeadlineMs(50)).toBe(45);
    expect(answerDeadlineMs(1000)).toBe(975);
    expect(answerDeadlineMs(10000)).toBe(9975);
    fc.assert(
      fc.property(fc.integer({ min: RECOMMEND_MIN_LATENCY_BUDGET_MS, max: RECOMMEND_MAX_LATENCY_BUDGET_MS }), (budget) => {
        const deadline = answerDeadlineMs(budget);
        return deadline > 0 && deadline < budget && budget - deadline <= 25;
      }),
    );
  });

  it("gives the answer's statement what is left, less a reserve", () => {
    expect(searchTimeoutMs(0)).toBe(1);
    expect(searchTimeoutMs(-5)).toBe(1);
    expect(searchTimeoutMs(45)).toBe(36);
    expect(searchTimeoutMs(975)).toBe(925);
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 100000 }), (remaining) => {
        const timeout = searchTimeoutMs(remaining);
        return timeout >= 1 && timeout < remaining && remaining - timeout <= 50;
      }),
    );
  });
});
