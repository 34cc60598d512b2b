import { relative } from 'node:path';
import { DEMO_OWNER_USERNAME } from '#libs/demo';
import type { DemoResult } from './demo.js';

const dollars = (micros: number) => `$${(micros / 1_000_000).toFixed(2)}`;
const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The end of a demo run, for a person: the key, a curl line, and what the report should show. */
export function summary(result: DemoResult, dashboardBuilt: boolean): string {
  const live = result.expected_reports.live;
  const test = result.expected_reports.test;
  const { published, payouts, keys } = result;
  const lines = [
    '',
    published.already_in_stream
      ? `The week of ${result.agent_id} was published by an earlier run: nothing added.`
      : `Published ${published.published} messages for ${result.agent_id}: ${published.stored} new, ${published.duplicates} already in the stream.`,
    `Week of activity: ${utc(result.week.start)} to ${utc(result.week.end)}, ${result.week.recommendations} recommendations.`,
    '',
    `API keys (${keys.live.created || keys.test.created ? 'created now' : 'kept from an earlier run'}; kept in ${relative(process.cwd(), result.keys_file)} for the next runs):`,
    `  live  ${keys.live.api_key}`,
    `  test  ${keys.test.api_key}`,
    '',
    `Catalog: ${result.catalog.imported} ads from ${relative(process.cwd(), result.catalog.file)} (${result.catalog.created} created now), so recommendations find products.`,
    '',
    'Try it:',
    `  curl -s -H 'Authorization: Bearer ${keys.live.api_key}' '${result.gateway.url}/agent/reporting?time_range=all'`,
    `  SERVICE_API_KEY=${keys.test.api_key} SERVICE_API_BASE_URL=${result.gateway.url} npm run -s example   (examples/recommend-and-report.ts: recommendations, exposure, click, the report moving)`,
    '',
    'The report (time_range=all, live) should show, once reporting-projection has published it',
    '(the first request answers 202 while the scope is prepared; then within a publication interval):',
    `  exposures ${live.exposures}, clicks ${live.clicks}, engagements ${live.engagements}, conversions ${live.conversions}`,
    `  earnings_micros ${live.earnings_micros} (${dollars(live.earnings_micros)}), earnings_excluded_recommendations ${live.earnings_excluded_recommendations} (an entry in EUR), ` +
      `pending_earnings_recommendations ${live.pending_earnings_recommendations}, accounting_review_required ${live.accounting_review_required}`,
    `  earnings_coverage partial, accounting_reconciled_through ${live.accounting_reconciled_through}`,
    `  time_range=7d shows the same until ${utc(result.seven_days_equal_all_until)}.`,
    `With the test key: exposures ${test.exposures}, clicks ${test.clicks}, engagements ${test.engagements}, conversions ${test.conversions}, no earnings (coverage unavailable).`,
    '',
    `Payouts (owner ${result.owner_uid}, role agent): USD balance available ${dollars(payouts.balance.available_micros)}, pending ${dollars(payouts.balance.pending_micros)}, ` +
      `locked ${dollars(payouts.balance.locked_micros)}, paid out ${dollars(payouts.balance.paid_out_micros)}; setup ${payouts.setupStatus}; ` +
      `${payouts.statements.length} statements (${payouts.statements.map((s) => s.status).join(', ')}).`,
  ];
  if (dashboardBuilt) {
    lines.push(`Dashboard: ${result.gateway.url}/dashboard/ (sign in as the owner ${result.owner_uid}: with npm start and no OIDC settings, user ${DEMO_OWNER_USERNAME} with the password its ready line printed).`);
  }
  if (!result.gateway.ready) {
    lines.push('', `The gateway does not answer at ${result.gateway.url}: start the system with npm start; the events wait in the stream.`);
  }
  return `${lines.join('\n')}\n`;
}
