import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { EarningsCoverage, TimeRange } from '#libs/contracts';
import { COUNTER_NAMES } from '../rules/counting.js';
import type { ScopeRef, Snapshot } from './snapshot.js';

interface SnapshotRow {
  agent_id: string;
  traffic: string;
  time_range: string;
  start_at: Date | null;
  end_at: Date;
  processed_through: Date;
  updated_at: Date;
  accounting_reconciled_through: Date | null;
  timezone: string;
  earnings_coverage: string;
  [counter: string]: unknown;
}

const CHUNK = 5000;

function fromRow(row: SnapshotRow): Snapshot {
  const snapshot = {
    agentId: row.agent_id,
    traffic: row.traffic,
    timeRange: row.time_range as TimeRange,
    start: row.start_at,
    end: row.end_at,
    processedThrough: row.processed_through,
    updatedAt: row.updated_at,
    reconciledThrough: row.accounting_reconciled_through,
    timezone: row.timezone,
    coverage: row.earnings_coverage as EarningsCoverage,
  } as Snapshot;
  for (const name of COUNTER_NAMES) snapshot[name] = Number(row[name]);
  return snapshot;
}

/** Prepared scopes and their published snapshots. */
// Raw SQL (hot path): a publication writes every snapshot in bulk (unnest arrays); no entities in schema reporting.
@Injectable()
export class SnapshotRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find(scope: ScopeRef): Promise<Snapshot | undefined> {
    const rows: SnapshotRow[] = await this.dataSource.query(
      `SELECT * FROM reporting.report_snapshot WHERE agent_id = $1 AND traffic = $2 AND time_range = $3`,
      [scope.agentId, scope.traffic, scope.timeRange],
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Registers a scope; true when this call registered it (its first request). */
  async register(scope: ScopeRef): Promise<boolean> {
    const rows = await this.dataSource.query(
      `INSERT INTO reporting.report_scope (agent_id, traffic, time_range) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING agent_id`,
      [scope.agentId, scope.traffic, scope.timeRange],
    );
    return rows.length > 0;
  }

  async allScopes(): Promise<ScopeRef[]> {
    const rows: { agent_id: string; traffic: string; time_range: TimeRange }[] = await this.dataSource.query(
      `SELECT agent_id, traffic, time_range FROM reporting.report_scope`,
    );
    return rows.map((r) => ({ agentId: r.agent_id, traffic: r.traffic, timeRange: r.time_range }));
  }

  async save(snapshots: Snapshot[], manager: EntityManager = this.dataSource.manager): Promise<void> {
    for (let offset = 0; offset < snapshots.length; offset += CHUNK) {
      const chunk = snapshots.slice(offset, offset + CHUNK);
      const iso = (d: Date | null) => (d === null ? null : d.toISOString());
      await manager.query(
        `INSERT INTO reporting.report_snapshot AS s (agent_id, traffic, time_range, start_at, end_at, processed_through,
           updated_at, accounting_reconciled_through, timezone, earnings_coverage, ${COUNTER_NAMES.join(', ')})
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[],
           $7::timestamptz[], $8::timestamptz[], $9::text[], $10::text[], ${COUNTER_NAMES.map((_, i) => `$${11 + i}::bigint[]`).join(', ')})
         ON CONFLICT (agent_id, traffic, time_range) DO UPDATE SET
           start_at = excluded.start_at, end_at = excluded.end_at, processed_through = excluded.processed_through,
           updated_at = excluded.updated_at, accounting_reconciled_through = excluded.accounting_reconciled_through,
           timezone = excluded.timezone, earnings_coverage = excluded.earnings_coverage,
           ${COUNTER_NAMES.map((name) => `${name} = excluded.${name}`).join(', ')}`,
        [
          chunk.map((s) => s.agentId),
          chunk.map((s) => s.traffic),
          chunk.map((s) => s.timeRange),
          chunk.map((s) => iso(s.start)),
          chunk.map((s) => iso(s.end)),
          chunk.map((s) => iso(s.processedThrough)),
          chunk.map((s) => iso(s.updatedAt)),
          chunk.map((s) => iso(s.reconciledThrough)),
          chunk.map((s) => s.timezone),
          chunk.map((s) => s.coverage),
          ...COUNTER_NAMES.map((name) => chunk.map((s) => s[name])),
        ],
      );
    }
  }
}
