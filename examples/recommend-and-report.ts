/**
 * What a platform does with the client library: ask for recommendations for a user's question,
 * show them (the exposure link is opened when the answer is displayed), follow the user's click,
 * and watch the platform's report count both.
 *
 *   SERVICE_API_KEY=sk_test_… SERVICE_API_BASE_URL=http://127.0.0.1:3000 npm run -s example
 *   npm run -s example -- "a quiet espresso machine for a small kitchen"      (another question)
 *   npm run -s example -- --json                                              (one JSON object at the end)
 *
 * `npm run demo` prints the line with its test key. The report counts an exposure once the
 * minute it happened in is processed: the script waits up to EXAMPLE_REPORT_TIMEOUT_MS (180000).
 */
import { ServiceClient, type ServiceRecommendation } from '@vendor/weave-node';

interface Report {
  exposures: number;
  clicks: number;
  processed_through: string | null;
}

const args = process.argv.slice(2);
const json = args.includes('--json');
const question = args.find((arg) => arg !== '--json') ?? 'lightweight trail running shoes for muddy paths';
const apiKey = process.env.SERVICE_API_KEY;
const baseUrl = (process.env.SERVICE_API_BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
const reportTimeoutMs = Number(process.env.EXAMPLE_REPORT_TIMEOUT_MS ?? 180_000);

/** For a person; with --json the lines go to stderr, so that stdout is the JSON object alone. */
const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The platform's report (all time, the key's traffic); undefined while it is being prepared (202). */
async function report(): Promise<Report | undefined> {
  const response = await fetch(`${baseUrl}/agent/reporting?time_range=all`, { headers: { authorization: `Bearer ${apiKey}` } });
  if (response.status === 202) return undefined;
  if (!response.ok) throw new Error(`GET /agent/reporting answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Report;
}

async function reportWhen(accept: (r: Report) => boolean, what: string): Promise<Report> {
  const deadline = Date.now() + reportTimeoutMs;
  let last: Report | undefined;
  for (;;) {
    last = (await report()) ?? last;
    if (last && accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`the report did not show ${what} within ${reportTimeoutMs} ms (last: ${JSON.stringify(last ?? null)})`);
    await sleep(1000);
  }
}

async function main(): Promise<void> {
  if (!apiKey) throw new Error('set SERVICE_API_KEY to a platform key (npm run demo prints one)');
  const before = await reportWhen(() => true, 'an answer');
  say(`report before: exposures ${before.exposures}, clicks ${before.clicks}`);

  const client = new ServiceClient({ apiKey, apiBaseUrl: baseUrl });
  const sessionId = `example-${Date.now()}`;
  const result = await client.getRecommendationsForWeave({ sessionId, messageId: 'message-1', query: question, locale: 'en-US' });
  if (!result.found || !result.recommendations?.length) throw new Error(`no recommendation for "${question}": ${result.error ?? 'none found'}`);
  say(`"${question}": ${result.recommendations.length} recommendation(s)`);
  for (const rec of result.recommendations) say(`  ${String(rec.contextual_relevance_score).padStart(3)}  ${rec.product_title}: ${rec.weave_summary ?? ''}`);

  // The answer is shown with the first recommendation woven in: its exposure link is opened.
  const shown: ServiceRecommendation = result.recommendations[0];
  const exposure = await fetch(shown.exposure_url);
  say(`exposure link: ${exposure.status}`);
  // The user clicks it: the click link counts the click and sends the browser to the product.
  const click = await fetch(shown.click_url, { redirect: 'manual' });
  say(`click link: ${click.status} → ${click.headers.get('location')}`);

  say('waiting for the report to count them (up to a minute or so: it counts whole minutes) …');
  let seen = before;
  const after = await reportWhen((r) => {
    if (r.exposures !== seen.exposures || r.clicks !== seen.clicks) {
      say(`report: exposures ${seen.exposures} → ${r.exposures}, clicks ${seen.clicks} → ${r.clicks}`);
      seen = r;
    }
    return r.exposures > before.exposures && r.clicks > before.clicks;
  }, 'the exposure and the click');
  say(`report after: exposures ${after.exposures}, clicks ${after.clicks} (processed through ${after.processed_through})`);
  if (json) {
    const recommendations = result.recommendations.map(({ recommendation_id, ad_id, product_title, contextual_relevance_score }) => ({ recommendation_id, ad_id, product_title, contextual_relevance_score }));
    process.stdout.write(`${JSON.stringify({ question, recommendations, exposure_status: exposure.status, click_status: click.status, before, after })}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`example failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
