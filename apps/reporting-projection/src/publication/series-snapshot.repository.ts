import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { SeriesBucket, SeriesGranularity, TimeRange } from '#libs/contracts';
import type { ScopeRef } from './snapshot.js';
import type { SeriesScopeRef, SeriesSnapshot } from './series-snapshot.js';

interface SeriesSnapshotRow {
  agent_id: string;
  traffic: string;
  time_range: TimeRange;
  granularity: SeriesGranularity;
  start_at: Date | null;
  end_at: Date;
  processed_through: Date;
  updated_at: Date;
  timezone: string;
  buckets: SeriesBucket[];
}

const CHUNK = 500;

function fromRow(row: SeriesSnapshotRow): SeriesSnapshot {
  return {
    agentId: row.agent_id,
    traffic: row.traffic,
    timeRange: row.time_range,
    granularity: row.granularity,
    start: row.start_at,
    end: row.end_at,
    processedThrough: row.processed_through,
    updatedAt: row.updated_at,
    timezone: row.timezone,
    buckets: row.buckets,
  };
}

/** Registered series scopes and their published snapshots. */
// Raw SQL (publication hot path): bulk writes through jsonb_to_recordset; no entities in schema reporting.
@Injectable()
export class SeriesSnapshotRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find(scope: SeriesScopeRef): Promise<SeriesSnapshot | undefined> {
    const rows: SeriesSnapshotRow[] = await this.dataSource.query(
      `SELECT * FROM reporting.series_snapshot WHERE agent_id = $1 AND traffic = $2 AND time_range = $3 AND granularity = $4`,
      [scope.agentId, scope.traffic, scope.timeRange, scope.granularity],
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /**
   * Registers a series scope and the report scope of the same platform, traffic and range (in
   * one statement), so that every publication computes the two together, in one snapshot.
   */
  async register(scope: SeriesScopeRef): Promise<void> {
    await this.dataSource.query(
      `WITH series AS (
         INSERT INTO reporting.series_scope (agent_id, traffic, time_range, granularity) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING)
       INSERT INTO reporting.report_scope (agent_id, traffic, time_range) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [scope.agentId, scope.traffic, scope.timeRange, scope.granularity],
    );
  }

  async allScopes(manager: EntityManager = this.dataSource.manager): Promise<SeriesScopeRef[]> {
    const rows: { agent_id: string; traffic: string; time_range: TimeRange; granularity: SeriesGranularity }[] = await manager.query(
      `SELECT agent_id, traffic, time_range, granularity FROM reporting.series_scope`,
    );
    return rows.map((r) => ({ agentId: r.agent_id, traffic: r.traffic, timeRange: r.time_range, granularity: r.granularity }));
  }

  /** The registered series of one report scope (its granularities). */
  async scopesOf(report: ScopeRef, manager: EntityManager = this.dataSource.manager): Promise<SeriesScopeRef[]> {
    const rows: { granularity: SeriesGranularity }[] = await manager.query(
      `SELECT granularity FROM reporting.series_scope WHERE agent_id = $1 AND traffic = $2 AND time_range = $3`,
      [report.agentId, report.traffic, report.timeRange],
    );
    return rows.map((r) => ({ ...report, granularity: r.granularity }));
  }

  async save(snapshots: SeriesSnapshot[], manager: EntityManager = this.dataSource.manager): Promise<void> {
    for (let offset = 0; offset < snapshots.length; offset += CHUNK) {
      const chunk = snapshots.slice(offset, offset + CHUNK).map((s) => ({
        agent_id: s.agentId,
        traffic: s.traffic,
        time_range: s.timeRange,
        granularity: s.granularity,
        start_at: s.start?.toISOString() ?? null,
        end_at: s.end.toISOString(),
        processed_through: s.processedThrough.toISOString(),
        updated_at: s.updatedAt.toISOString(),
        timezone: s.timezone,
        buckets: s.buckets,
      }));
      await manager.query(
        `INSERT INTO reporting.series_snapshot AS s (agent_id, traffic, time_range, granularity, start_at, end_at, processed_through, updated_at, timezone, buckets)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(agent_id text, traffic text, time_range text, granularity text, start_at timestamptz,
           end_at timestamptz, processed_through timestamptz, updated_at timestamptz, timezone text, buckets jsonb)
         ON CONFLICT (agent_id, traffic, time_range, granularity) DO UPDATE SET
           start_at = excluded.start_at, end_at = excluded.end_at, processed_through = excluded.processed_through,
           updated_at = excluded.updated_at, timezone = excluded.timezone, buckets = excluded.buckets`,
        [JSON.stringify(chunk)],
      );
    }
  }
}
