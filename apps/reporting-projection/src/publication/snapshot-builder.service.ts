import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { earningsCoverage, platformWatermark } from '../rules/coverage.js';
import { reportPeriod, type Period } from '../rules/periods.js';
import { DEFAULT_TIMEZONE, reportingTimezones } from './reporting-timezones.js';
import { RollupQueryRepository, scopeKey } from './rollup-query.repository.js';
import type { ScopeRef, Snapshot } from './snapshot.js';


/**
 * Computes the snapshots of many scopes at one processing cutoff with a handful of set-based
 * queries (see RollupQueryRepository): one pass for every period of the cycle.
 */
// Raw SQL (hot path): set-based reads over every scope of a publication; no entities in schema reporting.
@Injectable()
export class SnapshotBuilder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rollups: RollupQueryRepository,
  ) {}

  async build(scopes: ScopeRef[], processedThrough: Date, producedAt: Date, manager: EntityManager = this.dataSource.manager): Promise<Snapshot[]> {
    if (scopes.length === 0) return [];
    const agentIds = [...new Set(scopes.map((s) => s.agentId))];
    const timezones = await reportingTimezones(manager, agentIds);
    const watermarks = await this.watermarks(manager);

    // Every period of the cycle is summed in one pass over the rollups: the rolling windows
    // and `all` are shared by every platform, `today` differs by time zone only. Ranges that end
    // together share a scan, so the tables are read a handful of times per cycle in total.
    const periodIndex = new Map<string, number>();
    const periods: Period[] = [];
    const periodOf = (scope: ScopeRef) => {
      const timezone = scope.timeRange === 'today' ? (timezones.get(scope.agentId) ?? DEFAULT_TIMEZONE) : DEFAULT_TIMEZONE;
      const key = `${scope.timeRange}\u0000${timezone}`;
      let index = periodIndex.get(key);
      if (index === undefined) {
        index = periods.push(reportPeriod(scope.timeRange, processedThrough, timezone)) - 1;
        periodIndex.set(key, index);
      }
      return index;
    };
    const scopePeriods = scopes.map(periodOf);
    const platforms = new Map(scopes.map((s) => [scopeKey(s.agentId, s.traffic), { agentId: s.agentId, traffic: s.traffic }]));
    const sums = await this.rollups.sumForPeriods(periods, [...platforms.values()], manager);

    const snapshots: Snapshot[] = scopes.map((scope, i) => {
      const period = periods[scopePeriods[i]];
      const counters = sums[scopePeriods[i]].get(scopeKey(scope.agentId, scope.traffic))!;
      const reconciledThrough = platformWatermark(
        watermarks.get(scopeKey('', scope.traffic)) ?? null,
        watermarks.get(scopeKey(scope.agentId, scope.traffic)) ?? null,
      );
      return {
        ...scope,
        ...counters,
        start: period.start,
        end: period.end,
        processedThrough,
        updatedAt: producedAt,
        reconciledThrough,
        timezone: timezones.get(scope.agentId) ?? DEFAULT_TIMEZONE,
        coverage: earningsCoverage({
          reconciledThrough,
          end: period.end,
          pendingRecommendations: counters.pending_earnings_recommendations,
          reviewRequired: counters.accounting_review_required,
        }),
      };
    });
    return snapshots;
  }

  /** Keyed by scopeKey(agent or '' for the global watermark, traffic). */
  private async watermarks(manager: EntityManager): Promise<Map<string, Date>> {
    const rows: { traffic: string; agent_id: string; reconciled_through: Date }[] = await manager.query(
      `SELECT traffic, agent_id, reconciled_through FROM reporting.reconciliation_watermark`,
    );
    return new Map(rows.map((r) => [scopeKey(r.agent_id, r.traffic), r.reconciled_through]));
  }
}
