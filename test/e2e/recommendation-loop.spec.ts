import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAdsCommand, type AdsCommand } from '../../apps/ops/src/ads.js';
import { parseOpsCommand } from '../../apps/ops/src/cli.js';
import { runOpsCommand, type IdentityCommand } from '../../apps/ops/src/commands.js';
import {
  identityOf,
  loadBuiltWeaveNode,
  startGateway,
  startRecommendations,
  startReportingProjection,
  useTestStack,
  waitFor,
  type WeaveNode,
} from '../support/index.js';

/**
 * The closed loop with the real services, each as main.ts starts it: the BUILT client library
 * (libs/weave-node/dist) asks the gateway for recommendations, the recommendations service ranks
 * the sample catalog (imported with the ops command) and publishes `generated`, the end user's
 * browser opens the exposure and click URLs (gateway → `shown`, `clicked` on JetStream), and
 * reporting-projection counts them in the platform's report.
 */

const ROOT = process.cwd();
const CATALOG = join(ROOT, 'catalog', 'sample-catalog.json');
const AGENT = 'agent_loop';

let lib: WeaveNode;
const stack = useTestStack();
let base: string;
let liveKey: string;
const landingByAd = new Map<string, string>();

/** An ops command run in-process, exactly as `npm run ops -- …` runs it. */
async function ops(argv: string[]): Promise<Record<string, unknown>> {
  const command = parseOpsCommand(argv);
  if (command.kind === 'ads.import' || command.kind === 'ads.list') return runAdsCommand(command as AdsCommand, stack.db.url);
  return (await runOpsCommand(command as IdentityCommand, await identityOf(stack))).output;
}

beforeAll(async () => {
  lib = await loadBuiltWeaveNode();

  for (const ad of (JSON.parse(readFileSync(CATALOG, 'utf8')) as { ads: { ad_id: string; landing_url: string }[] }).ads) {
    landingByAd.set(ad.ad_id, ad.landing_url);
  }

  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 500 }));
  stack.track(await startRecommendations(stack.urls));
  ({ base } = await startGateway(stack, { oidc: false, extra: { LOG_LEVEL: 'warn', TRACKING_SIGNING_SECRET: 'recommendation-loop-e2e-secret-42' } }));

  expect(await ops(['platform', 'create', '--agent-id', AGENT])).toMatchObject({ agent_id: AGENT, status: 'active' });
  const key = await ops(['key', 'create', '--agent-id', AGENT, '--mode', 'live']);
  liveKey = String(key.api_key);
  expect(liveKey).toMatch(/^sk_live_/);
  expect(await ops(['ads', 'import', '--file', CATALOG])).toMatchObject({ imported: landingByAd.size });
});

const client = (apiKey = liveKey) => new lib.ServiceClient({ apiKey, apiBaseUrl: base, timeoutMs: 15000 });
// A generous budget: the machine is shared, and the loop is about correctness, not latency.
const ask = (messageId: string, query: string, apiKey?: string) =>
  client(apiKey).getRecommendationsForWeave({ sessionId: 'sess_loop', messageId, query, latencyBudgetMs: 5000, locale: 'en-US', geo: 'US' });

async function report(): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${base}/agent/reporting?time_range=all`, { headers: { authorization: `Bearer ${liveKey}` } });
  return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
}

it('recommend → exposure → click shows up in the report of the platform', async () => {
  const result = await ask('msg_loop_1', 'lightweight trail running shoes for muddy paths');
  expect(result.found).toBe(true);
  expect(result.query).toBe('lightweight trail running shoes for muddy paths');
  expect(result.requestId).toEqual(expect.any(String));
  const recs = result.recommendations!;
  expect(recs.length).toBeGreaterThanOrEqual(1);
  expect(recs.length).toBeLessThanOrEqual(3);
  for (const r of recs) {
    expect(landingByAd.has(r.ad_id)).toBe(true);
    expect(r.recommendation_id).toEqual(expect.any(String));
    expect(r.product_title.length).toBeGreaterThan(0);
    expect(r.contextual_relevance_score).toBeGreaterThanOrEqual(0);
    expect(r.contextual_relevance_score).toBeLessThanOrEqual(100);
    expect(r.exposure_url.startsWith(`${base}/track/exposure?t=`)).toBe(true);
    expect(r.click_url.startsWith(`${base}/track/click?t=`)).toBe(true);
  }
  const top = recs[0];
  expect(top.product_title).toMatch(/running shoes/i);

  const exposure = await fetch(top.exposure_url);
  expect(exposure.status).toBe(204);
  const click = await fetch(top.click_url, { redirect: 'manual' });
  expect(click.status).toBe(302);
  expect(click.headers.get('location')).toBe(landingByAd.get(top.ad_id));

  // The recommendation counts in the minute it was created, which the report includes once
  // processing has passed it (processed_through is a minute boundary): up to a minute or so.
  const counted = await waitFor(
    async () => {
      const body = await report();
      return body && body.exposures === 1 && body.clicks === 1 ? body : undefined;
    },
    { timeoutMs: 150000, intervalMs: 1000, what: 'a report with exposures 1 and clicks 1' },
  );
  // The other recommendations were only generated: not exposures (SPEC counting rule 3).
  expect(counted).toMatchObject({ agent_id: AGENT, is_test: false, exposures: 1, clicks: 1, engagements: 0, conversions: 0 });
}, 200000);

it('answers the same recommendations for the same session and message', async () => {
  const first = await ask('msg_loop_repeat', 'espresso machine for home baristas');
  const again = await ask('msg_loop_repeat', 'espresso machine for home baristas');
  expect(first.found).toBe(true);
  expect(again.recommendations!.map((r) => r.recommendation_id)).toEqual(first.recommendations!.map((r) => r.recommendation_id));
  expect(again.recommendations!.map((r) => r.ad_id)).toEqual(first.recommendations!.map((r) => r.ad_id));
});

it('gives found: false for a nonsense query, without throwing', async () => {
  const result = await ask('msg_loop_nonsense', 'zxqv plorkt wubbleflarg');
  expect(result.found).toBe(false);
  expect(result.recommendations).toBeUndefined();
  expect(result.error).toEqual(expect.any(String));
});

it('rejects with its authentication error for a bad key (the key never in the message)', async () => {
  const badKey = `sk_live_${'Z'.repeat(40)}`;
  const failure = await ask('msg_loop_badkey', 'running shoes', badKey).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(lib.ServiceAuthenticationError);
  expect((failure as InstanceType<WeaveNode['ServiceAuthenticationError']>).status).toBe(401);
  expect(String((failure as Error).message)).not.toContain(badKey);
});
