import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { earningsCoverage, platformWatermark } from '../rules/coverage.js';
import { reportPeriod } from '../rules/periods.js';
import { RollupQueryRepository, scopeKey } from './rollup-query.repository.js';
import type { ScopeRef, Snapshot } from './snapshot.js';

const DEFAULT_TIMEZONE = 'UTC';

/**
 * Computes the snapshots of many scopes at one processing cutoff with a handful of set-based
 * queries: one per rolling range and `all` (every platform shares that period), and one per
 * distinct time zone for `today`.
 */
@Injectable()
export class SnapshotBuilder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rollups: RollupQueryRepository,
  ) {}

  async build(scopes: ScopeRef[], processedThrough: Date, producedAt: Date, manager: EntityManager = this.dataSource.manager): Promise<Snapshot[]> {
    if (scopes.length === 0) return [];
    const agentIds = [...new Set(scopes.map((s) => s.agentId))];
    const timezones = await this.timezones(agentIds, manager);
    const watermarks = await this.watermarks(manager);

    // Group scopes by the period they share.
    const groups = new Map<string, { timezone: string; range: ScopeRef['timeRange']; scopes: ScopeRef[] }>();
    for (const scope of scopes) {
      const timezone = scope.timeRange === 'today' ? (timezones.get(scope.agentId) ?? DEFAULT_TIMEZONE) : DEFAULT_TIMEZONE;
      const key = `${scope.timeRange}\u0000${timezone}`;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { timezone, range: scope.timeRange, scopes: [] }));
      group.scopes.push(scope);
    }

    const snapshots: Snapshot[] = [];
    for (const group of groups.values()) {
      const period = reportPeriod(group.range, processedThrough, group.timezone);
      const sums = await this.rollups.sumForScopes(
        period,
        group.scopes.map((s) => ({ agentId: s.agentId, traffic: s.traffic })),
        manager,
      );
      for (const scope of group.scopes) {
        const counters = sums.get(scopeKey(scope.agentId, scope.traffic))!;
        const reconciledThrough = platformWatermark(
          watermarks.get(scopeKey('', scope.traffic)) ?? null,
          watermarks.get(scopeKey(scope.agentId, scope.traffic)) ?? null,
        );
        snapshots.push({
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
        });
      }
    }
    return snapshots;
  }

  private async timezones(agentIds: string[], manager: EntityManager): Promise<Map<string, string>> {
    const rows: { agent_id: string; timezone: string }[] = await manager.query(
      `SELECT agent_id, timezone FROM reporting.platform_timezone WHERE agent_id = ANY($1::text[])`,
      [agentIds],
    );
    return new Map(rows.map((r) => [r.agent_id, r.timezone]));
  }

  /** Keyed by scopeKey(agent or '' for the global watermark, traffic). */
  private async watermarks(manager: EntityManager): Promise<Map<string, Date>> {
    const rows: { traffic: string; agent_id: string; reconciled_through: Date }[] = await manager.query(
      `SELECT traffic, agent_id, reconciled_through FROM reporting.reconciliation_watermark`,
    );
    return new Map(rows.map((r) => [scopeKey(r.agent_id, r.traffic), r.reconciled_through]));
  }
}
