import { Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { counter } from '#libs/observability';
import { PayoutReplyCache } from '../queries/payout-reply-cache.js';
import { decodePayoutEvent, type BalanceRecord, type ReadinessRecord, type StatementRecord } from './payout-event-decoder.js';
import { versionedUpsertSql } from './versioned-upsert.js';

const payoutEvents = counter('weave_payout_events_total', 'Payout events by kind and effect', ['kind', 'effect']);

const UPSERT_BALANCES = versionedUpsertSql('payouts.balance', ['agent_id', 'currency'], {
  agent_id: 'text',
  currency: 'text',
  pending_micros: 'bigint',
  available_micros: 'bigint',
  locked_micros: 'bigint',
  paid_out_micros: 'bigint',
  updated_at: 'timestamptz',
  version: 'bigint',
});
const UPSERT_READINESS = versionedUpsertSql('payouts.readiness', ['agent_id'], {
  agent_id: 'text',
  setup_status: 'text',
  missing_fields: 'jsonb',
  thresholds: 'jsonb',
  blocked_reason: 'text',
  updated_at: 'timestamptz',
  version: 'bigint',
});
const UPSERT_STATEMENTS = versionedUpsertSql('payouts.statement', ['statement_id'], {
  statement_id: 'text',
  agent_id: 'text',
  period_start: 'timestamptz',
  period_end: 'timestamptz',
  currency: 'text',
  status: 'text',
  gross_earnings_micros: 'bigint',
  service_fee_micros: 'bigint',
  net_earnings_micros: 'bigint',
  blocked_reason: 'text',
  failure: 'jsonb',
  transfer: 'jsonb',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
  version: 'bigint',
});

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Keeps, per record key, the event with the highest version (the first of equal versions). */
function newestPerKey<T extends { version: number }>(records: T[], keyOf: (record: T) => string): T[] {
  const newest = new Map<string, T>();
  for (const record of records) {
    const key = keyOf(record);
    const known = newest.get(key);
    if (!known || known.version < record.version) newest.set(key, record);
  }
  // Sorted by key: every replica locks rows in the same order, so batches never deadlock.
  return [...newest.entries()].sort(([a], [b]) => byCodeUnit(a, b)).map(([, record]) => record);
}

/**
 * Applies a batch of payout events to the read model in one transaction.
 *
 * Each event carries the full state of one record and a version; a row changes only when the
 * event's version is newer than the stored one (`ON CONFLICT … WHERE stored.version <
 * excluded.version`). So duplicates, redeliveries, replays and any arrival order converge on the
 * newest version of every record.
 */
// Raw SQL (hot path): one multi-row upsert per table and batch, guarded by version; no entities in schema payouts.
@Injectable()
export class PayoutsProjectionService {
  constructor(
    private readonly dataSource: DataSource,
    @Optional() private readonly replies?: PayoutReplyCache,
  ) {}

  async applyBatch(messages: InboundMessage[]): Promise<MessageOutcome[]> {
    const outcomes: MessageOutcome[] = messages.map(() => ({ kind: 'applied' }));
    const balances: BalanceRecord[] = [];
    const readiness: ReadinessRecord[] = [];
    const statements: StatementRecord[] = [];
    messages.forEach((message, index) => {
      const event = decodePayoutEvent(message);
      if (event.type === 'invalid') outcomes[index] = { kind: 'dead-letter', reason: event.reason, cause: 'invalid' };
      else if (event.type === 'balance') balances.push(event.record);
      else if (event.type === 'readiness') readiness.push(event.record);
      else statements.push(event.record);
    });
    if (balances.length + readiness.length + statements.length === 0) return outcomes;

    const changed = await this.dataSource.transaction('READ COMMITTED', async (manager) => ({
      balance: await this.upsert(manager, UPSERT_BALANCES, newestPerKey(balances, (r) => `${r.agent_id}\u0000${r.currency}`)),
      readiness: await this.upsert(manager, UPSERT_READINESS, newestPerKey(readiness, (r) => r.agent_id)),
      statement: await this.upsert(manager, UPSERT_STATEMENTS, newestPerKey(statements, (r) => r.statement_id)),
    }));
    this.replies?.announce([...new Set([...balances, ...readiness, ...statements].map((record) => record.agent_id))]);
    const received = { balance: balances.length, readiness: readiness.length, statement: statements.length };
    for (const kind of ['balance', 'readiness', 'statement'] as const) {
      if (changed[kind] > 0) payoutEvents.inc({ kind, effect: 'applied' }, changed[kind]);
      if (received[kind] > changed[kind]) payoutEvents.inc({ kind, effect: 'ignored' }, received[kind] - changed[kind]);
    }
    return outcomes;
  }

  /** Writes the records newer than what is stored (one statement); how many it wrote. */
  private async upsert(manager: EntityManager, statement: string, records: object[]): Promise<number> {
    if (records.length === 0) return 0;
    const rows: unknown[] = await manager.query(statement, [JSON.stringify(records)]);
    return rows.length;
  }
}
