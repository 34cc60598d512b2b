import fc from 'fast-check';
import { TRAFFICS } from '#libs/contracts';
import {
  answerTokenSigner,
  signTrackingToken,
  verifyTrackingToken,
  type SignedTrackingClaims,
  type TrackedRecommendation,
} from '../../apps/gateway/src/tracking/tracking-token.js';

/**
 * The tokens of an answer's links (answerTokenSigner, the claims' JSON written from fragments)
 * must be those of signTrackingToken for the same claims, byte for byte: one format, whichever
 * path signed it, and each token verifies for its own kind only.
 */
const SECRET = 'tracking-token-spec-secret';
// Ids and URLs with what JSON escapes: quotes, backslashes, control characters, non-ASCII, lone surrogates.
const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });
const recommendation = fc.record<TrackedRecommendation>({
  recommendation_id: text,
  created_at: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  ad_id: text,
  product_id: text,
  landing_url: text.map((path) => `https://shop.example/${path}`),
});

function claimsOf(agentId: string, traffic: (typeof TRAFFICS)[number], exp: number, r: TrackedRecommendation) {
  const common = {
    v: 1 as const,
    recommendation_id: r.recommendation_id,
    agent_id: agentId,
    traffic,
    recommendation_created_at: r.created_at,
    ad_id: r.ad_id,
    product_id: r.product_id,
    exp,
  };
  const shown: SignedTrackingClaims = { ...common, kind: 'shown' };
  const clicked: SignedTrackingClaims = { ...common, kind: 'clicked', landing_url: r.landing_url };
  return { shown, clicked };
}

describe('answerTokenSigner', () => {
  it('signs the tokens signTrackingToken signs for the same claims', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(...TRAFFICS), fc.integer({ min: 0, max: 2 ** 40 }), fc.array(recommendation, { minLength: 1, maxLength: 3 }), (agentId, traffic, exp, recommendations) => {
        const sign = answerTokenSigner(agentId, traffic, exp, SECRET);
        for (const r of recommendations) {
          const claims = claimsOf(agentId, traffic, exp, r);
          const tokens = sign(r);
          expect(tokens.shown).toBe(signTrackingToken(claims.shown, SECRET));
          expect(tokens.clicked).toBe(signTrackingToken(claims.clicked, SECRET));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('signs tokens that verify for their own kind and not the other', () => {
    const r: TrackedRecommendation = {
      recommendation_id: 'rec_1',
      created_at: '2026-11-28T07:47:00.123Z',
      ad_id: 'ad_"quoted"\\1',
      product_id: 'prod_é',
      landing_url: 'https://shop.example/p?q="1"',
    };
    const { shown, clicked } = answerTokenSigner('agent_1', 'live', 1_900_000_000, SECRET)(r);
    const expected = claimsOf('agent_1', 'live', 1_900_000_000, r);
    expect(verifyTrackingToken(shown, 'shown', [SECRET])).toEqual(expected.shown);
    expect(verifyTrackingToken(clicked, 'clicked', [SECRET])).toEqual(expected.clicked);
    expect(verifyTrackingToken(shown, 'clicked', [SECRET])).toBeNull();
    expect(verifyTrackingToken(clicked, 'shown', [SECRET])).toBeNull();
    expect(verifyTrackingToken(shown, 'shown', ['another secret'])).toBeNull();
  });

  it('refuses an expiry that is not whole seconds', () => {
    expect(() => answerTokenSigner('agent_1', 'live', 1.5, SECRET)).toThrow(RangeError);
  });
});
