import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { BreakdownBy, BreakdownRow, BreakdownSort, TimeRange } from '#libs/contracts';
import type { BreakdownFigures } from '../ingestion/breakdown-deltas.js';
import type { BreakdownScopeRef, BreakdownSnapshot } from './breakdown-snapshot.js';
import type { ScopeRef } from './snapshot.js';

interface BreakdownSnapshotRow {
  agent_id: string;
  traffic: string;
  time_range: TimeRange;
  dimension: BreakdownBy;
  start_at: Date | null;
  end_at: Date;
  processed_through: Date;
  updated_at: Date;
  timezone: string;
  totals: BreakdownFigures;
  tops: Record<BreakdownSort, BreakdownRow[]>;
}

const CHUNK = 200;

function fromRow(row: BreakdownSnapshotRow): BreakdownSnapshot {
  return {
    agentId: row.agent_id,
    traffic: row.traffic,
    timeRange: row.time_range,
    by: row.dimension,
    start: row.start_at,
    end: row.end_at,
    processedThrough: row.processed_through,
    updatedAt: row.updated_at,
    timezone: row.timezone,
    totals: row.totals,
    tops: row.tops,
  };
}

/** Registered breakdown scopes and their published snapshots (as SeriesSnapshotRepository for series). */
// Raw SQL (publication hot path): bulk writes through jsonb_to_recordset; no entities in schema reporting.
@Injectable()
export class BreakdownSnapshotRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find(scope: BreakdownScopeRef): Promise<BreakdownSnapshot | undefined> {
    const rows: BreakdownSnapshotRow[] = await this.dataSource.query(
      `SELECT * FROM reporting.breakdown_snapshot WHERE agent_id = $1 AND traffic = $2 AND time_range = $3 AND dimension = $4`,
      [scope.agentId, scope.traffic, scope.timeRange, scope.by],
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Registers a breakdown scope and the report scope of the same platform, traffic and range, so that a publication computes the two in one snapshot. */
  async register(scope: BreakdownScopeRef): Promise<void> {
    await this.dataSource.query(
      `WITH breakdown AS (
         INSERT INTO reporting.breakdown_scope (agent_id, traffic, time_range, dimension) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING)
       INSERT INTO reporting.report_scope (agent_id, traffic, time_range) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [scope.agentId, scope.traffic, scope.timeRange, scope.by],
    );
  }

  async allScopes(manager: EntityManager = this.dataSource.manager): Promise<BreakdownScopeRef[]> {
    const rows: { agent_id: string; traffic: string; time_range: TimeRange; dimension: BreakdownBy }[] = await manager.query(
      `SELECT agent_id, traffic, time_range, dimension FROM reporting.breakdown_scope`,
    );
    return rows.map((r) => ({ agentId: r.agent_id, traffic: r.traffic, timeRange: r.time_range, by: r.dimension }));
  }

  /** The registered breakdowns of one report scope (its dimensions). */
  async scopesOf(report: ScopeRef, manager: EntityManager = this.dataSource.manager): Promise<BreakdownScopeRef[]> {
    const rows: { dimension: BreakdownBy }[] = await manager.query(
      `SELECT dimension FROM reporting.breakdown_scope WHERE agent_id = $1 AND traffic = $2 AND time_range = $3`,
      [report.agentId, report.traffic, report.timeRange],
    );
    return rows.map((r) => ({ ...report, by: r.dimension }));
  }

  async save(snapshots: BreakdownSnapshot[], manager: EntityManager = this.dataSource.manager): Promise<void> {
    for (let offset = 0; offset < snapshots.length; offset += CHUNK) {
      const chunk = snapshots.slice(offset, offset + CHUNK).map((s) => ({
        agent_id: s.agentId,
        traffic: s.traffic,
        time_range: s.timeRange,
        dimension: s.by,
        start_at: s.start?.toISOString() ?? null,
        end_at: s.end.toISOString(),
        processed_through: s.processedThrough.toISOString(),
        updated_at: s.updatedAt.toISOString(),
        timezone: s.timezone,
        totals: s.totals,
        tops: s.tops,
      }));
      await manager.query(
        `INSERT INTO reporting.breakdown_snapshot AS s (agent_id, traffic, time_range, dimension, start_at, end_at, processed_through, updated_at, timezone, totals, tops)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(agent_id text, traffic text, time_range text, dimension text, start_at timestamptz,
           end_at timestamptz, processed_through timestamptz, updated_at timestamptz, timezone text, totals jsonb, tops jsonb)
         ON CONFLICT (agent_id, traffic, time_range, dimension) DO UPDATE SET
           start_at = excluded.start_at, end_at = excluded.end_at, processed_through = excluded.processed_through,
           updated_at = excluded.updated_at, timezone = excluded.timezone, totals = excluded.totals, tops = excluded.tops`,
        [JSON.stringify(chunk)],
      );
    }
  }
}
