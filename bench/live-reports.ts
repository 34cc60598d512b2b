/**
 * The end of bench:mixed and bench:soak: every report (platform × traffic × range), from a
 * publication that covers the last event published, against the reference model of everything
 * the live publisher published (test/faults/support/model-comparison.ts).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { Report } from '#libs/contracts';
import { compareWithModel, type Comparison } from '../test/faults/support/model-comparison.js';
import { allScopes, requestReport } from '../test/faults/support/reports.js';
import { waitFor } from '../test/support/index.js';
import type { PublisherDone } from './live-publisher.js';
import { liveAgent, liveModelEvents } from './live-workload.js';

/** Asks reporting-projection over NATS, as the gateway does; waits for each report to cover the last event (a publication after its minute ended). */
export async function liveReportsAgainstModel(connection: NatsConnection, platforms: number, published: PublisherDone, publishIntervalMs: number): Promise<Comparison> {
  const lastCreatedMs = published.created[published.created.length - 1] ?? 0;
  const reports: Report[] = [];
  for (const scope of allScopes(Array.from({ length: platforms }, (_, p) => liveAgent(p)))) {
    reports.push(
      await waitFor(
        async () => {
          const report = await requestReport(connection, scope);
          return report.status !== 'preparing' && Date.parse(report.end_at) > lastCreatedMs ? report : undefined;
        },
        { timeoutMs: 60_000 + 3 * publishIntervalMs, intervalMs: 500, what: `a report of ${scope.agent_id}/${scope.traffic}/${scope.time_range} covering the last event` },
      ),
    );
  }
  return compareWithModel(reports, liveModelEvents(platforms, published.created, published.watermarks));
}

/** One line of figures, then the first mismatches. */
export function describeComparison(comparison: Comparison, platforms: number, seconds: number): string[] {
  const t = comparison.totals;
  return [
    `reference model: ${comparison.scopes.toLocaleString('en-US')} reports (${platforms} platforms × 2 traffics × 6 ranges) compared in ${seconds.toFixed(0)} s; ` +
      `mismatches ${comparison.mismatches.length.toLocaleString('en-US')}; all-time totals: exposures ${t.exposures.toLocaleString('en-US')}, clicks ${t.clicks.toLocaleString('en-US')}, ` +
      `conversions ${t.conversions.toLocaleString('en-US')}, earnings_micros ${t.earnings_micros.toLocaleString('en-US')}, under review ${t.accounting_review_required.toLocaleString('en-US')}`,
    ...comparison.mismatches.slice(0, 20).map((line) => `  ${line}`),
  ];
}
