import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type {
  PayoutBalance,
  PayoutFailure,
  PayoutReadiness,
  PayoutStatement,
  PayoutStatementStatus,
  PayoutThreshold,
  PayoutTransfer,
} from '#libs/contracts';

interface BalanceRow {
  agent_id: string;
  currency: string;
  pending_micros: string;
  available_micros: string;
  locked_micros: string;
  paid_out_micros: string;
  updated_at: Date;
}

interface ReadinessRow {
  agent_id: string;
  setup_status: PayoutReadiness['setup_status'];
  missing_fields: string[];
  thresholds: PayoutThreshold[];
  blocked_reason: string | null;
  updated_at: Date;
}

interface StatementRow {
  statement_id: string;
  agent_id: string;
  period_start: Date;
  period_end: Date;
  currency: string;
  status: PayoutStatementStatus;
  gross_earnings_micros: string | null;
  service_fee_micros: string | null;
  net_earnings_micros: string | null;
  blocked_reason: string | null;
  failure: PayoutFailure | null;
  transfer: PayoutTransfer | null;
  created_at: Date;
  updated_at: Date;
}

/** bigint columns arrive as strings; every stored value came from a safe integer. */
const micros = (value: string | null) => (value === null ? null : Number(value));

const STATEMENT_COLUMNS = `statement_id, agent_id, period_start, period_end, currency, status, gross_earnings_micros,
  service_fee_micros, net_earnings_micros, blocked_reason, failure, transfer, created_at, updated_at`;
/** Newest period first; the statement id breaks ties so pages never overlap. */
const NEWEST_FIRST = 'period_start DESC, period_end DESC, statement_id DESC';

function toBalance(row: BalanceRow): PayoutBalance {
  return {
    agent_id: row.agent_id,
    currency: row.currency,
    pending_micros: Number(row.pending_micros),
    available_micros: Number(row.available_micros),
    locked_micros: Number(row.locked_micros),
    paid_out_micros: Number(row.paid_out_micros),
    updated_at: row.updated_at.toISOString(),
  };
}

function toStatement(row: StatementRow): PayoutStatement {
  return {
    statement_id: row.statement_id,
    agent_id: row.agent_id,
    period_start: row.period_start.toISOString(),
    period_end: row.period_end.toISOString(),
    currency: row.currency,
    status: row.status,
    gross_earnings_micros: micros(row.gross_earnings_micros),
    service_fee_micros: micros(row.service_fee_micros),
    net_earnings_micros: micros(row.net_earnings_micros),
    blocked_reason: row.blocked_reason,
    failure: row.failure,
    transfer: row.transfer,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Reads of the payout read model. Every query is scoped by the caller's agent_id. */
// Raw SQL (hot path): the payout reads behind the gateway, each one indexed statement; no entities in schema payouts.
@Injectable()
export class PayoutsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async balances(agentId: string): Promise<PayoutBalance[]> {
    const rows: BalanceRow[] = await this.dataSource.query(
      `SELECT agent_id, currency, pending_micros, available_micros, locked_micros, paid_out_micros, updated_at
         FROM payouts.balance WHERE agent_id = $1 ORDER BY currency`,
      [agentId],
    );
    return rows.map(toBalance);
  }

  /** The platform's readiness; before any readiness event, setup not started. */
  async readiness(agentId: string): Promise<PayoutReadiness> {
    const rows: ReadinessRow[] = await this.dataSource.query(
      `SELECT agent_id, setup_status, missing_fields, thresholds, blocked_reason, updated_at
         FROM payouts.readiness WHERE agent_id = $1`,
      [agentId],
    );
    const row = rows[0];
    if (!row) return { agent_id: agentId, setup_status: 'not_started', missing_fields: [], thresholds: [], blocked_reason: null, updated_at: null };
    return { ...row, updated_at: row.updated_at.toISOString() };
  }

  async statement(agentId: string, statementId: string): Promise<PayoutStatement | undefined> {
    // PostgreSQL text cannot hold NUL: no statement has such an id, and asking would be an error.
    if (statementId.includes('\u0000')) return undefined;
    const rows: StatementRow[] = await this.dataSource.query(
      `SELECT ${STATEMENT_COLUMNS} FROM payouts.statement WHERE statement_id = $1 AND agent_id = $2`,
      [statementId, agentId],
    );
    return rows[0] ? toStatement(rows[0]) : undefined;
  }

  /** The platform's newest statements (any status), newest period first; no count. */
  async recentStatements(agentId: string, limit: number): Promise<PayoutStatement[]> {
    const rows: StatementRow[] = await this.dataSource.query(
      `SELECT ${STATEMENT_COLUMNS} FROM payouts.statement WHERE agent_id = $1 ORDER BY ${NEWEST_FIRST} LIMIT $2`,
      [agentId, limit],
    );
    return rows.map(toStatement);
  }

  /** One page of the platform's statements with the given statuses, newest period first, and their total. */
  async statements(
    agentId: string,
    statuses: readonly PayoutStatementStatus[] | undefined,
    page: number,
    pageSize: number,
  ): Promise<{ items: PayoutStatement[]; total: number }> {
    const filter = statuses ? 'agent_id = $1 AND status = ANY($2::text[])' : 'agent_id = $1';
    const params: unknown[] = statuses ? [agentId, statuses] : [agentId];
    // (page − 1) × page_size exactly, even for a page far beyond the end.
    const offset = ((BigInt(page) - 1n) * BigInt(pageSize)).toString();
    const [rows, counted] = await Promise.all([
      this.dataSource.query(
        `SELECT ${STATEMENT_COLUMNS} FROM payouts.statement WHERE ${filter}
          ORDER BY ${NEWEST_FIRST} LIMIT $${params.length + 1} OFFSET $${params.length + 2}::bigint`,
        [...params, pageSize, offset],
      ) as Promise<StatementRow[]>,
      this.dataSource.query(`SELECT count(*)::int AS total FROM payouts.statement WHERE ${filter}`, params) as Promise<{ total: number }[]>,
    ]);
    return { items: rows.map(toStatement), total: counted[0].total };
  }
}
