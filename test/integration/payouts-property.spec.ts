import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import type { InboundMessage } from '#libs/nats';
import { createPayoutsDataSource } from '../../apps/payouts-read/src/database/payouts.data-source.js';
import { PayoutsProjectionService } from '../../apps/payouts-read/src/ingestion/payouts-projection.service.js';
import { checkProperty, deliveryPlan, useMigratedDatabase } from '../support/index.js';

/**
 * The payout read model against its definition: for every record, the state of the event with
 * the highest version. Random versioned events, shuffled, duplicated, split into random batches
 * and partly redelivered (with invalid events mixed in), always give exactly that read model.
 */
const encoder = new TextEncoder();
const AGENTS = ['agent_a', 'agent_b'];
const CURRENCIES = ['USD', 'EUR'];

const timestamp = fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2027, 0, 1) }).map((ms) => new Date(ms).toISOString());
const micros = fc.integer({ min: -1_000_000_000, max: 1_000_000_000_000 });
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const versions = fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 5 });

const balanceState = fc.record({
  pending_micros: micros, available_micros: micros, locked_micros: micros, paid_out_micros: micros, updated_at: timestamp,
});
const readinessState = fc.record({
  setup_status: fc.constantFrom('not_started', 'in_progress', 'complete'),
  missing_fields: fc.array(fc.constantFrom('tax_id', 'bank_account', 'address'), { maxLength: 3 }),
  thresholds: fc.array(fc.record({ currency: fc.constantFrom(...CURRENCIES), minimum_payout_micros: micros }), { maxLength: 2 }),
  blocked_reason: nullable(fc.constantFrom('tax form missing', 'hold')),
  updated_at: timestamp,
});
const transfer = fc.record({
  transfer_reference: fc.constantFrom('tr_1', 'tr_2'),
  status: fc.constantFrom('initiated', 'settled'),
  initiated_at: nullable(timestamp),
  settled_at: nullable(timestamp),
  source_currency: fc.constant('USD'),
  source_amount_micros: nullable(micros),
  target_currency: nullable(fc.constantFrom('USD', 'EUR', 'GBP')),
  amount_received_micros: nullable(micros),
  fee_micros: nullable(micros),
  exchange_rate: nullable(fc.oneof(fc.constantFrom('0.9277', '1', '151.25'), fc.constantFrom(0.5, 1.25))),
});
const statementState = fc.record({
  agent_id: fc.constantFrom(...AGENTS),
  period_start: fc.integer({ min: 0, max: 30 }).map((m) => new Date(Date.UTC(2024, m, 1)).toISOString()),
  currency: fc.constantFrom(...CURRENCIES),
  status: fc.constantFrom('LOCKED', 'BLOCKED', 'FAILED', 'PAID'),
  gross_earnings_micros: nullable(micros),
  service_fee_micros: nullable(micros),
  net_earnings_micros: nullable(micros),
  blocked_reason: nullable(fc.constant('hold')),
  failure: nullable(fc.record({ code: fc.constant('declined'), message: fc.constant('Declined by the bank') })),
  transfer: nullable(transfer),
  created_at: timestamp,
  updated_at: timestamp,
});

/** One record key with its versions, each version with its own full state. */
const withVersions = <T>(state: fc.Arbitrary<T>) =>
  versions.chain((vs) => fc.tuple(...vs.map((v) => state.map((s) => ({ ...s, version: v })))));

const scenario = fc.record({
  balances: fc.array(fc.record({ agent_id: fc.constantFrom(...AGENTS), currency: fc.constantFrom(...CURRENCIES), states: withVersions(balanceState) }), { maxLength: 4 }),
  readiness: fc.array(fc.record({ agent_id: fc.constantFrom(...AGENTS), states: withVersions(readinessState) }), { maxLength: 2 }),
  statements: fc.array(fc.record({ statement_id: fc.constantFrom('st_1', 'st_2', 'st_3'), states: withVersions(statementState) }), { maxLength: 4 }),
  invalid: fc.array(fc.constantFrom('{oops', '{"agent_id":"agent_a","currency":"USD","version":1}', '[]'), { maxLength: 2 }),
  seed: fc.integer(),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;
type Event = { subject: string; payload: Record<string, unknown> | string };

/**
 * Flattens the scenario into events. A key drawn twice keeps only the versions not already
 * drawn (versions are unique per record, as DESIGN requires of producers).
 */
function eventsOf(s: Scenario): { events: Event[]; expected: Map<string, Record<string, unknown>> } {
  const events: Event[] = [];
  const expected = new Map<string, Record<string, unknown>>();
  const seen = new Set<string>();
  const add = (table: string, key: string, subject: string, payload: Record<string, unknown>) => {
    const id = `${table}|${key}|${payload.version as number}`;
    if (seen.has(id)) return;
    seen.add(id);
    events.push({ subject, payload });
    const known = expected.get(`${table}|${key}`);
    if (!known || (known.version as number) < (payload.version as number)) expected.set(`${table}|${key}`, payload);
  };
  for (const b of s.balances) for (const state of b.states) add('balance', `${b.agent_id}|${b.currency}`, 'events.payouts.balance', { agent_id: b.agent_id, currency: b.currency, ...state });
  for (const r of s.readiness) for (const state of r.states) add('readiness', r.agent_id, 'events.payouts.readiness', { agent_id: r.agent_id, ...state });
  for (const st of s.statements) {
    for (const state of st.states) {
      const periodEnd = new Date(Date.parse(state.period_start) + 28 * 86_400_000).toISOString();
      add('statement', st.statement_id, 'events.payouts.statement', { statement_id: st.statement_id, ...state, period_end: periodEnd });
    }
  }
  for (const raw of s.invalid) events.push({ subject: 'events.payouts.balance', payload: raw });
  return { events, expected };
}

const iso = (value: Date | null) => (value === null ? null : value.toISOString());
const num = (value: string | null) => (value === null ? null : Number(value));

async function readModel(dataSource: DataSource): Promise<Map<string, Record<string, unknown>>> {
  const model = new Map<string, Record<string, unknown>>();
  for (const row of await dataSource.query(`SELECT * FROM payouts.balance`)) {
    model.set(`balance|${row.agent_id}|${row.currency}`, {
      agent_id: row.agent_id, currency: row.currency, pending_micros: num(row.pending_micros), available_micros: num(row.available_micros),
      locked_micros: num(row.locked_micros), paid_out_micros: num(row.paid_out_micros), updated_at: iso(row.updated_at), version: num(row.version),
    });
  }
  for (const row of await dataSource.query(`SELECT * FROM payouts.readiness`)) {
    model.set(`readiness|${row.agent_id}`, {
      agent_id: row.agent_id, setup_status: row.setup_status, missing_fields: row.missing_fields, thresholds: row.thresholds,
      blocked_reason: row.blocked_reason, updated_at: iso(row.updated_at), version: num(row.version),
    });
  }
  for (const row of await dataSource.query(`SELECT * FROM payouts.statement`)) {
    model.set(`statement|${row.statement_id}`, {
      statement_id: row.statement_id, agent_id: row.agent_id, period_start: iso(row.period_start), period_end: iso(row.period_end),
      currency: row.currency, status: row.status, gross_earnings_micros: num(row.gross_earnings_micros),
      service_fee_micros: num(row.service_fee_micros), net_earnings_micros: num(row.net_earnings_micros),
      blocked_reason: row.blocked_reason, failure: row.failure, transfer: row.transfer, created_at: iso(row.created_at),
      updated_at: iso(row.updated_at), version: num(row.version),
    });
  }
  return model;
}

describe('payouts read model property: any arrival order and batching gives the newest version of every record', () => {
  const scratch = useMigratedDatabase((url) => createPayoutsDataSource(url, 4));

  it('matches the newest version per record, and invalid events are dead-lettered', async () => {
    const { dataSource } = scratch;
    const projection = new PayoutsProjectionService(dataSource);
    await checkProperty(
      [scenario],
      async (s) => {
        await dataSource.query(`TRUNCATE payouts.balance, payouts.readiness, payouts.statement`);
        const { events, expected } = eventsOf(s);
        const messages: InboundMessage[] = events.map(({ subject, payload }, i) => ({
          subject,
          data: encoder.encode(typeof payload === 'string' ? payload : JSON.stringify(payload)),
          sequence: i + 1,
          deliveries: 1,
        }));
        const invalidSequences = new Set(events.flatMap((e, i) => (typeof e.payload === 'string' ? [i + 1] : [])));
        for (const batch of deliveryPlan(messages, s.seed)) {
          const outcomes = await projection.applyBatch(batch);
          batch.forEach((message, i) => {
            expect(outcomes[i].kind).toBe(invalidSequences.has(message.sequence) ? 'dead-letter' : 'applied');
          });
        }
        expect(await readModel(dataSource)).toEqual(expected);
      },
      { runs: 150 },
    );
  });
});
