import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { RECOMMEND_DEFAULT_LATENCY_BUDGET_MS, fastCheckOf } from '#libs/contracts';
import { RecommendHttpBodyDto, RecommendRequestDto, passesRecommendHttpBodyFastCheck, passesRecommendRequestFastCheck } from '#libs/recommend-request';

/**
 * The recommend pre-checks let the gateway's HTTP pipe and the service's RPC pipe skip
 * class-validator only because they never accept what the DTOs (whitelist, forbidNonWhitelisted,
 * after class-transformer, as the pipes validate) reject, and because what they accept is what
 * class-transformer would have produced (the effective budget).
 */
const validated = (dto: new () => object, payload: unknown): object | undefined => {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const instance = plainToInstance(dto, payload);
  return validateSync(instance, { whitelist: true, forbidNonWhitelisted: true }).length === 0 ? instance : undefined;
};

/** Mostly valid strings of at most `max`, and the edges around it. */
const text = (max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 6 }).filter((t) => t.trim() !== '') },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t', 'x'.repeat(max), 'x'.repeat(max + 1), `${'x'.repeat(max - 1)}\uD83D\uDE00`, '\u0000', 'é') },
  );
const anything = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.string(), fc.array(fc.integer(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
const message = fc.record(
  { role: text(50), content: fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('', 'x'.repeat(8000), 'x'.repeat(8001))), id: text(200) },
  { requiredKeys: ['role', 'content'] },
);
const budget = fc.oneof(fc.integer({ min: -5, max: 700_000 }), fc.integer({ min: 50, max: 10_000 }), fc.constantFrom(0, 1, 49, 50, 50.5, 1000, 10_000, 10_001, 600_000, 600_001, Number.NaN, '1000', 1e309));
const body = {
  session_id: text(200),
  message_id: text(200),
  query: text(2000),
  latency_budget_ms: budget,
  messages: fc.array(message, { maxLength: 3 }),
  locale: fc.constantFrom('en-US', 'fr', 'en_US', 'xx-999-invalid-', '', 'x'.repeat(36), 'de-CH-1996'),
  geo: fc.constantFrom('US', 'us', 'USA', '1A', ''),
  user_id: text(200),
  model: text(200),
  platform_id: text(200),
  platform_surface: text(200),
};
const REQUIRED = ['session_id', 'message_id', 'query'] as const;
/** A payload of mostly valid fields, then up to two of them (or an unknown one) replaced by anything, or removed. */
function payloads(fields: Record<string, fc.Arbitrary<unknown>>, required: readonly string[]): fc.Arbitrary<unknown> {
  const names = [...Object.keys(fields), 'extra', '__proto__'];
  return fc
    .tuple(fc.record(fields, { requiredKeys: required as string[] }), fc.array(fc.tuple(fc.constantFrom(...names), anything), { maxLength: 2 }))
    .map(([valid, changes]) => {
      const payload: Record<string, unknown> = { ...valid };
      for (const [name, value] of changes) Object.defineProperty(payload, name, { value, enumerable: true, configurable: true, writable: true });
      return payload;
    });
}
const httpBody = payloads(body, REQUIRED);
const request = payloads(
  { ...body, latency_budget_ms: budget, agent_id: text(200), traffic: fc.constantFrom('live', 'test', 'live', 'LIVE', ''), request_id: text(200) },
  [...REQUIRED, 'latency_budget_ms', 'agent_id', 'traffic', 'request_id'],
);
const asJson = (payload: unknown) => (payload && typeof payload === 'object' ? JSON.parse(JSON.stringify(payload)) : payload);

describe('recommend fast checks accept only what the DTOs accept', () => {
  it('the HTTP body: accepted bodies are valid, with the same effective budget as after class-transformer', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(httpBody, anything), (payload) => {
        const plain = asJson(payload);
        if (!passesRecommendHttpBodyFastCheck(plain)) return;
        accepted++;
        const instance = validated(RecommendHttpBodyDto, plain) as RecommendHttpBodyDto | undefined;
        expect(instance).toBeDefined();
        expect(Object.assign(new RecommendHttpBodyDto(), plain).latency_budget_ms).toBe(instance!.latency_budget_ms);
      }),
      { numRuns: 5000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('the request of recommendations.v1.recommend', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(request, anything), (payload) => {
        const plain = asJson(payload);
        if (!passesRecommendRequestFastCheck(plain)) return;
        accepted++;
        expect(validated(RecommendRequestDto, plain)).toBeDefined();
      }),
      { numRuns: 5000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('the DTOs carry their checks (@FastCheck), so the validation pipes use them', () => {
    expect(fastCheckOf(RecommendHttpBodyDto)).toBe(passesRecommendHttpBodyFastCheck);
    expect(fastCheckOf(RecommendRequestDto)).toBe(passesRecommendRequestFastCheck);
  });

  it('accepts the normal requests and leaves the rest to class-validator', () => {
    const question = { session_id: 'ses_1', message_id: 'msg_1', query: 'running shoes', messages: [{ role: 'user', content: 'hi', id: 'm0' }], locale: 'en-US', geo: 'US' };
    expect(passesRecommendHttpBodyFastCheck(question)).toBe(true);
    expect(passesRecommendHttpBodyFastCheck({ ...question, latency_budget_ms: 800 })).toBe(true);
    expect(Object.assign(new RecommendHttpBodyDto(), question).latency_budget_ms).toBe(RECOMMEND_DEFAULT_LATENCY_BUDGET_MS);
    const forwarded = { ...question, latency_budget_ms: 1000, agent_id: 'agent_a', traffic: 'live', request_id: 'req_1' };
    expect(passesRecommendRequestFastCheck(forwarded)).toBe(true);
    // Left to class-validator: a budget it clamps, an unknown field, a blank query, a message without role.
    expect(passesRecommendHttpBodyFastCheck({ ...question, latency_budget_ms: 20 })).toBe(false);
    expect(passesRecommendHttpBodyFastCheck({ ...question, agent_id: 'agent_a' })).toBe(false);
    expect(passesRecommendRequestFastCheck({ ...forwarded, query: '  ' })).toBe(false);
    expect(passesRecommendRequestFastCheck({ ...forwarded, messages: [{ content: 'x' }] })).toBe(false);
    expect(passesRecommendRequestFastCheck({ ...forwarded, traffic: 'prod' })).toBe(false);
    expect(validated(RecommendRequestDto, { ...forwarded, traffic: 'prod' })).toBeUndefined();
  });
});
