import { Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { counter } from '#libs/observability';
import { PayoutReplyCache } from '../queries/payout-reply-cache.js';
import { decodePayoutEvent, type BalanceRecord, type ReadinessRecord, type StatementRecord } from './payout-event-decoder.js';

const payoutEvents = counter('weave_payout_events_total', 'Payout events by kind and effect', ['kind', 'effect']);

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
      balance: await this.upsertBalances(manager, newestPerKey(balances, (r) => `${r.agent_id}\u0000${r.currency}`)),
      readiness: await this.upsertReadiness(manager, newestPerKey(readiness, (r) => r.agent_id)),
      statement: await this.upsertStatements(manager, newestPerKey(statements, (r) => r.statement_id)),
    }));
    this.replies?.announce([...new Set([...balances, ...readiness, ...statements].map((record) => record.agent_id))]);
    const received = { balance: balances.length, readiness: readiness.length, statement: statements.length };
    for (const kind of ['balance', 'readiness', 'statement'] as const) {
      if (changed[kind] > 0) payoutEvents.inc({ kind, effect: 'applied' }, changed[kind]);
      if (received[kind] > changed[kind]) payoutEvents.inc({ kind, effect: 'ignored' }, received[kind] - changed[kind]);
    }
    return outcomes;
  }

  private async upsertBalances(manager: EntityManager, records: BalanceRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const rows: unknown[] = await manager.query(
      `INSERT INTO payouts.balance AS stored
         (agent_id, currency, pending_micros, available_micros, locked_micros, paid_out_micros, updated_at, version)
       SELECT agent_id, currency, pending_micros, available_micros, locked_micros, paid_out_micros, updated_at, version
         FROM jsonb_to_recordset($1::jsonb) AS x(agent_id text, currency text, pending_micros bigint, available_micros bigint,
              locked_micros bigint, paid_out_micros bigint, updated_at timestamptz, version bigint)
       ON CONFLICT (agent_id, currency) DO UPDATE SET
         pending_micros = excluded.pending_micros, available_micros = excluded.available_micros,
         locked_micros = excluded.locked_micros, paid_out_micros = excluded.paid_out_micros,
         updated_at = excluded.updated_at, version = excluded.version
       WHERE stored.version < excluded.version
       RETURNING 1`,
      [JSON.stringify(records)],
    );
    return rows.length;
  }

  private async upsertReadiness(manager: EntityManager, records: ReadinessRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const rows: unknown[] = await manager.query(
      `INSERT INTO payouts.readiness AS stored
         (agent_id, setup_status, missing_fields, thresholds, blocked_reason, updated_at, version)
       SELECT agent_id, setup_status, missing_fields, thresholds, blocked_reason, updated_at, version
         FROM jsonb_to_recordset($1::jsonb) AS x(agent_id text, setup_status text, missing_fields jsonb, thresholds jsonb,
              blocked_reason text, updated_at timestamptz, version bigint)
       ON CONFLICT (agent_id) DO UPDATE SET
         setup_status = excluded.setup_status, missing_fields = excluded.missing_fields, thresholds = excluded.thresholds,
         blocked_reason = excluded.blocked_reason, updated_at = excluded.updated_at, version = excluded.version
       WHERE stored.version < excluded.version
       RETURNING 1`,
      [JSON.stringify(records)],
    );
    return rows.length;
  }

  private async upsertStatements(manager: EntityManager, records: StatementRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const rows: unknown[] = await manager.query(
      `INSERT INTO payouts.statement AS stored
         (statement_id, agent_id, period_start, period_end, currency, status, gross_earnings_micros, service_fee_micros,
          net_earnings_micros, blocked_reason, failure, transfer, created_at, updated_at, version)
       SELECT statement_id, agent_id, period_start, period_end, currency, status, gross_earnings_micros, service_fee_micros,
              net_earnings_micros, blocked_reason, failure, transfer, created_at, updated_at, version
         FROM jsonb_to_recordset($1::jsonb) AS x(statement_id text, agent_id text, period_start timestamptz,
              period_end timestamptz, currency text, status text, gross_earnings_micros bigint, service_fee_micros bigint,
              net_earnings_micros bigint, blocked_reason text, failure jsonb, transfer jsonb, created_at timestamptz,
              updated_at timestamptz, version bigint)
       ON CONFLICT (statement_id) DO UPDATE SET
         agent_id = excluded.agent_id, period_start = excluded.period_start, period_end = excluded.period_end,
         currency = excluded.currency, status = excluded.status, gross_earnings_micros = excluded.gross_earnings_micros,
         service_fee_micros = excluded.service_fee_micros, net_earnings_micros = excluded.net_earnings_micros,
         blocked_reason = excluded.blocked_reason, failure = excluded.failure, transfer = excluded.transfer,
         created_at = excluded.created_at, updated_at = excluded.updated_at, version = excluded.version
       WHERE stored.version < excluded.version
       RETURNING 1`,
      [JSON.stringify(records)],
    );
    return rows.length;
  }
}
