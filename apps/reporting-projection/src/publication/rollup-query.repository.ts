import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { COUNTER_NAMES, zeroCounters, type Counters } from '../rules/counting.js';
import { decomposePeriod } from '../rules/rollup-ranges.js';
import type { Period } from '../rules/periods.js';
import { addStateSums, coarsenedParts, forEachRollupRange, minuteRollupsFrom, type StateSegment } from './coarsened-rollups.js';

export interface ScopeKey {
  agentId: string;
  traffic: string;
}

export const scopeKey = (agentId: string, traffic: string) => `${agentId}\u0000${traffic}`;

type Grain = 'day' | 'hour' | 'quarter' | 'minute';

/** One scan of a rollup table: buckets below `to`, summed once per distinct lower bound. */
export interface RollupScan {
  grain: Grain;
  to: Date;
  /** Lower bounds (null: from the beginning) and the periods each one belongs to. */
  lowerBounds: { from: Date | null; periods: number[] }[];
  sql: string;
  parameters: unknown[];
}

const TIME_KEY = (d: Date | null) => (d === null ? '-' : String(d.getTime()));

/**
 * Sums rollups over periods for many platforms with set-based SQL. Each period is split into
 * whole UTC days, whole hours at the day edges and minutes at the hour edges (a 90d report
 * reads about 90 + 46 + 118 rows per platform, not 129,600 minute rows). Ranges of several
 * periods that end at the same bucket share one scan of their table, with one FILTERed sum per
 * lower bound, so a publication reads the day table once for 1d, 7d, 30d, 90d and all together.
 * Every scan is a single bucket range, so it is an index range condition, never a filter.
 *
 * Minutes older than the minute window are kept as quarter-hours (StoragePartitions.coarsen):
 * the minute ranges before the bound `rollup_minute_window.minute_from` are read from
 * rollup_quarter, and an edge that is not on a quarter-hour from the per-recommendation state
 * (coarsened-rollups.ts). The bound is read in the caller's snapshot, so the caller must lock
 * rollup_minute before its snapshot begins (PublicationService.readOneSnapshot) for a coarsening
 * not to drop a week between the two.
 */
// Raw SQL (hot path): generated range scans with FILTERed sums, which a query builder cannot express.
@Injectable()
export class RollupQueryRepository {
  constructor(private readonly dataSource: DataSource) {}

  async sumForPeriods(
    periods: Period[],
    scopes: ScopeKey[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Map<string, Counters>[]> {
    const results = periods.map(() => {
      const sums = new Map<string, Counters>();
      for (const scope of scopes) sums.set(scopeKey(scope.agentId, scope.traffic), zeroCounters());
      return sums;
    });
    if (scopes.length === 0) return results;
    const bound = await minuteRollupsFrom(manager);
    await addStateSums(RollupQueryRepository.stateSegments(periods, bound), scopes, manager, COUNTER_NAMES, (segment, key) => results[segment.period].get(key));
    for (const scan of RollupQueryRepository.buildScans(periods, scopes, bound)) {
      const rows: Record<string, string | null>[] = await manager.query(scan.sql, scan.parameters);
      for (const row of rows) {
        const key = scopeKey(row.agent_id!, row.traffic!);
        scan.lowerBounds.forEach((bound, i) => {
          for (const period of bound.periods) {
            const counters = results[period].get(key)!;
            for (const name of COUNTER_NAMES) counters[name] += Number(row[`b${i}_${name}`] ?? 0);
          }
        });
      }
    }
    return results;
  }

  async sumForScopes(period: Period, scopes: ScopeKey[], manager?: EntityManager): Promise<Map<string, Counters>> {
    return (await this.sumForPeriods([period], scopes, manager))[0];
  }

  /** The part-quarters of the periods answered from the state (before the bound, off a quarter-hour). */
  static stateSegments(periods: Period[], bound: number): (StateSegment & { period: number })[] {
    return periods.flatMap((period, index) =>
      decomposePeriod(period).minutes.flatMap((range) =>
        coarsenedParts(range.from!.getTime(), range.to.getTime(), bound).state.map((segment) => ({ ...segment, period: index })),
      ),
    );
  }

  /** The scans of a set of periods (bound: where minute rows start, see minuteRollupsFrom); public for the benchmark's EXPLAIN. */
  static buildScans(periods: Period[], scopes: ScopeKey[], bound = Number.NEGATIVE_INFINITY): RollupScan[] {
    const groups = new Map<string, { grain: Grain; to: Date; bounds: Map<string, { from: Date | null; periods: number[] }> }>();
    periods.forEach((period, index) => {
      const buckets = decomposePeriod(period);
      const add = (grain: Grain, from: Date | null, to: Date) => {
        const groupKey = `${grain}:${to.getTime()}`;
        let group = groups.get(groupKey);
        if (!group) groups.set(groupKey, (group = { grain, to, bounds: new Map() }));
        let bound = group.bounds.get(TIME_KEY(from));
        if (!bound) group.bounds.set(TIME_KEY(from), (bound = { from, periods: [] }));
        bound.periods.push(index);
      };
      forEachRollupRange(buckets, bound, add);
    });

    return [...groups.values()].map((group) => {
      const lowerBounds = [...group.bounds.values()];
      const parameters: unknown[] = [scopes.map((s) => s.agentId), scopes.map((s) => s.traffic), group.to.toISOString()];
      const filters = lowerBounds.map((bound) => {
        if (bound.from === null) return 'true';
        parameters.push(bound.from.toISOString());
        return `r.bucket >= $${parameters.length}::timestamptz`;
      });
      const lowest = lowerBounds.some((b) => b.from === null)
        ? null
        : new Date(Math.min(...lowerBounds.map((b) => b.from!.getTime())));
      let where = 'r.bucket < $3::timestamptz';
      if (lowest) {
        parameters.push(lowest.toISOString());
        where += ` AND r.bucket >= $${parameters.length}::timestamptz`;
      }
      const sums = lowerBounds
        .flatMap((_, i) => COUNTER_NAMES.map((name) => `sum(r.${name}) FILTER (WHERE ${filters[i]})::bigint AS b${i}_${name}`))
        .join(', ');
      const sql = `WITH scope AS (SELECT * FROM unnest($1::text[], $2::text[]) AS s(agent_id, traffic))
        SELECT r.agent_id, r.traffic, ${sums}
        FROM scope s JOIN reporting.rollup_${group.grain} r ON r.agent_id = s.agent_id AND r.traffic = s.traffic
        WHERE ${where}
        GROUP BY r.agent_id, r.traffic`;
      return { grain: group.grain, to: group.to, lowerBounds, sql, parameters };
    });
  }
}
