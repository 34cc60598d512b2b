import type { DataSource, EntityManager } from 'typeorm';
import type { ScopeRef } from './snapshot.js';

/** What every split snapshot holds beside its scope and content: the period and cutoff of its report. */
export interface SplitPeriod {
  /** null for `all` (DESIGN §7). */
  start: Date | null;
  end: Date;
  processedThrough: Date;
  updatedAt: Date;
  timezone: string;
}

/**
 * Where a split of the report (the series by granularity, the breakdown by dimension) is kept:
 * reporting.<name>_scope and reporting.<name>_snapshot, keyed by the report scope's three
 * columns and `keyColumn` (the scope's field `key`), the content in jsonb columns named as the
 * snapshot's fields.
 */
export interface SplitTables<Scope extends ScopeRef, Snapshot extends Scope & SplitPeriod> {
  name: 'series' | 'breakdown';
  key: Exclude<keyof Scope & string, keyof ScopeRef>;
  keyColumn: string;
  content: readonly Exclude<keyof Snapshot & string, keyof Scope | keyof SplitPeriod>[];
  /** Snapshots written per statement. */
  chunk: number;
}

type Row = Record<string, unknown>;

type Column = [name: string, type: string];

const PERIOD_COLUMNS: Column[] = [['start_at', 'timestamptz'], ['end_at', 'timestamptz'], ['processed_through', 'timestamptz'], ['updated_at', 'timestamptz'], ['timezone', 'text']];
const names = (columns: Column[]) => columns.map(([name]) => name).join(', ');

/**
 * Registered scopes of one split of the report and their published snapshots (SeriesSnapshotRepository,
 * BreakdownSnapshotRepository). Registering a split registers its report scope in the same
 * statement, so that a publication computes the two in one snapshot.
 */
// Raw SQL (publication hot path): bulk writes through jsonb_to_recordset; no entities in schema reporting.
export abstract class SplitSnapshotRepository<Scope extends ScopeRef, Snapshot extends Scope & SplitPeriod> {
  private readonly upsert: string;

  protected constructor(
    private readonly dataSource: DataSource,
    private readonly tables: SplitTables<Scope, Snapshot>,
  ) {
    const keys: Column[] = ['agent_id', 'traffic', 'time_range', tables.keyColumn].map((name) => [name, 'text']);
    const values: Column[] = [...PERIOD_COLUMNS, ...tables.content.map((name): Column => [name, 'jsonb'])];
    this.upsert =
      `INSERT INTO reporting.${tables.name}_snapshot AS s (${names([...keys, ...values])}) ` +
      `SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(${[...keys, ...values].map(([name, type]) => `${name} ${type}`).join(', ')}) ` +
      `ON CONFLICT (${names(keys)}) DO UPDATE SET ${values.map(([name]) => `${name} = excluded.${name}`).join(', ')}`;
  }

  async find(scope: Scope): Promise<Snapshot | undefined> {
    const { name, keyColumn, key } = this.tables;
    const rows: Row[] = await this.dataSource.query(
      `SELECT * FROM reporting.${name}_snapshot WHERE agent_id = $1 AND traffic = $2 AND time_range = $3 AND ${keyColumn} = $4`,
      [scope.agentId, scope.traffic, scope.timeRange, scope[key]],
    );
    return rows[0] ? this.fromRow(rows[0]) : undefined;
  }

  /** Registers a split scope and the report scope of the same platform, traffic and range (in one statement). */
  async register(scope: Scope): Promise<void> {
    const { name, keyColumn, key } = this.tables;
    await this.dataSource.query(
      `WITH split AS (
         INSERT INTO reporting.${name}_scope (agent_id, traffic, time_range, ${keyColumn}) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING)
       INSERT INTO reporting.report_scope (agent_id, traffic, time_range) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [scope.agentId, scope.traffic, scope.timeRange, scope[key]],
    );
  }

  async allScopes(manager: EntityManager = this.dataSource.manager): Promise<Scope[]> {
    const { name, keyColumn } = this.tables;
    const rows: Row[] = await manager.query(`SELECT agent_id, traffic, time_range, ${keyColumn} FROM reporting.${name}_scope`);
    return rows.map((row) => this.withKey({ agentId: row.agent_id, traffic: row.traffic, timeRange: row.time_range } as ScopeRef, row));
  }

  /** The registered splits of one report scope (its granularities or dimensions). */
  async scopesOf(report: ScopeRef, manager: EntityManager = this.dataSource.manager): Promise<Scope[]> {
    const { name, keyColumn } = this.tables;
    const rows: Row[] = await manager.query(`SELECT ${keyColumn} FROM reporting.${name}_scope WHERE agent_id = $1 AND traffic = $2 AND time_range = $3`, [
      report.agentId,
      report.traffic,
      report.timeRange,
    ]);
    return rows.map((row) => this.withKey(report, row));
  }

  async save(snapshots: Snapshot[], manager: EntityManager = this.dataSource.manager): Promise<void> {
    const { key, keyColumn, content, chunk: size } = this.tables;
    for (let offset = 0; offset < snapshots.length; offset += size) {
      const chunk = snapshots.slice(offset, offset + size).map((s) => {
        const row: Row = {
          agent_id: s.agentId,
          traffic: s.traffic,
          time_range: s.timeRange,
          [keyColumn]: s[key],
          start_at: s.start?.toISOString() ?? null,
          end_at: s.end.toISOString(),
          processed_through: s.processedThrough.toISOString(),
          updated_at: s.updatedAt.toISOString(),
          timezone: s.timezone,
        };
        for (const name of content) row[name] = s[name];
        return row;
      });
      await manager.query(this.upsert, [JSON.stringify(chunk)]);
    }
  }

  private withKey(report: ScopeRef, row: Row): Scope {
    return { ...report, [this.tables.key]: row[this.tables.keyColumn] } as Scope;
  }

  private fromRow(row: Row): Snapshot {
    const snapshot: Row = {
      ...(this.withKey({ agentId: row.agent_id, traffic: row.traffic, timeRange: row.time_range } as ScopeRef, row) as Row),
      start: row.start_at,
      end: row.end_at,
      processedThrough: row.processed_through,
      updatedAt: row.updated_at,
      timezone: row.timezone,
    };
    for (const name of this.tables.content) snapshot[name] = row[name];
    return snapshot as Snapshot;
  }
}
