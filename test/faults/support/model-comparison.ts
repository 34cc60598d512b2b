import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { REPORT_COUNTERS, type Report } from '#libs/contracts';
import { referenceReport, type ModelEvent } from '../../support/reference-model.js';
import { deadLetters } from './dead-letters.js';

// Published reports and read-model rows against the reference model of the acknowledged events.

export interface Comparison {
  scopes: number;
  mismatches: string[];
  /** Sum of the counters over the `all` reports, to show the test compared real numbers. */
  totals: { exposures: number; clicks: number; conversions: number; earnings_micros: number; accounting_review_required: number };
}

const COUNTERS = REPORT_COUNTERS;

/**
 * Every report against the reference model of the acknowledged events over the report's own
 * period (start_at, end_at): each counter, the watermark and the coverage must be equal.
 */
export function compareWithModel(reports: Report[], acked: ModelEvent[]): Comparison {
  const mismatches: string[] = [];
  const totals = { exposures: 0, clicks: 0, conversions: 0, earnings_micros: 0, accounting_review_required: 0 };
  const eventsOf = scopedEvents(acked);
  for (const report of reports) {
    const traffic = report.is_test ? 'test' : 'live';
    const scope = `${report.agent_id}/${traffic}/${report.time_range}`;
    const end = new Date(report.end_at);
    if (report.end_at !== report.processed_through) mismatches.push(`${scope}: end_at ${report.end_at} is not processed_through ${report.processed_through}`);
    const expected = referenceReport(eventsOf(report.agent_id, traffic), { agent_id: report.agent_id, traffic, start: report.start_at ? new Date(report.start_at) : null, end });
    for (const counter of COUNTERS) {
      if (report[counter] !== expected[counter]) mismatches.push(`${scope}: ${counter} ${report[counter]} ≠ model ${expected[counter]}`);
    }
    const watermark = expected.reconciled_through?.toISOString() ?? null;
    if (report.accounting_reconciled_through !== watermark) mismatches.push(`${scope}: accounting_reconciled_through ${report.accounting_reconciled_through} ≠ model ${watermark}`);
    const coverage =
      expected.reconciled_through === null
        ? 'unavailable'
        : expected.reconciled_through >= end && expected.pending_earnings_recommendations === 0 && expected.accounting_review_required === 0
          ? 'complete'
          : 'partial';
    if (report.earnings_coverage !== coverage) mismatches.push(`${scope}: earnings_coverage ${report.earnings_coverage} ≠ model ${coverage}`);
    if (report.time_range === 'all') for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += report[key];
  }
  return { scopes: reports.length, mismatches, totals };
}

/**
 * The events the reference model needs for one platform and traffic. The model replays every
 * event for every scope (about a second per call for 200,000 events); when no recommendation
 * is named under two platforms or traffics (true of buildWorkload), the events of other scopes
 * cannot change this one's report: an entry is attributed only to a recommendation of its own
 * platform and traffic, and watermarks apply by traffic (and platform, when they name one).
 * Otherwise every event is kept.
 */
function scopedEvents(events: ModelEvent[]): (agentId: string, traffic: 'live' | 'test') => ModelEvent[] {
  const owner = new Map<string, string>();
  let separable = true;
  for (const event of events) {
    if (event.type !== 'recommendation') continue;
    const scope = `${event.agent_id}\u0000${event.traffic}`;
    const known = owner.get(event.recommendation_id);
    if (known === undefined) owner.set(event.recommendation_id, scope);
    else if (known !== scope) separable = false;
  }
  const cache = new Map<string, ModelEvent[]>();
  return (agentId, traffic) => {
    if (!separable) return events;
    const key = `${agentId}\u0000${traffic}`;
    let list = cache.get(key);
    if (!list) {
      list = events.filter((event) =>
        event.type === 'reconciled'
          ? event.traffic === traffic && ((event.agent_id ?? null) === null || event.agent_id === agentId)
          : event.agent_id === agentId && event.traffic === traffic,
      );
      cache.set(key, list);
    }
    return list;
  };
}

/** Rows of the read model against the model: one per known recommendation, one per entry. */
export async function readModelRows(databaseUrl: string): Promise<{ recommendations: number; entries: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const [{ recommendations }] = (await client.query(`SELECT count(*)::int AS recommendations FROM reporting.recommendation WHERE agent_id IS NOT NULL`)).rows;
    const [{ entries }] = (await client.query(`SELECT count(*)::int AS entries FROM reporting.accounting_entry`)).rows;
    return { recommendations, entries };
  } finally {
    await client.end();
  }
}

export function modelRows(acked: ModelEvent[]): { recommendations: number; entries: number } {
  const recommendations = new Set<string>();
  const entries = new Set<string>();
  for (const event of acked) {
    if (event.type === 'recommendation') recommendations.add(event.recommendation_id);
    else if (event.type === 'accounting') entries.add(event.entry_id);
  }
  return { recommendations: recommendations.size, entries: entries.size };
}

/**
 * The end state every fault must leave: no report differs from the reference model of the
 * acknowledged events (and, with `minExposures`, the reports counted more than that many
 * exposures, so real numbers were compared), the read model holds exactly the model's rows, and
 * nothing was dead-lettered.
 */
export async function expectAgreesWithModel(
  stack: { producer: { connection: NatsConnection; manager: JetStreamManager }; databaseUrl: string },
  comparison: Comparison,
  acked: ModelEvent[],
  minExposures?: number,
): Promise<void> {
  expect(comparison.mismatches).toEqual([]);
  if (minExposures !== undefined) expect(comparison.totals.exposures).toBeGreaterThan(minExposures);
  expect(await readModelRows(stack.databaseUrl)).toEqual(modelRows(acked));
  expect(await deadLetters(stack.producer.connection, stack.producer.manager)).toEqual([]);
}
