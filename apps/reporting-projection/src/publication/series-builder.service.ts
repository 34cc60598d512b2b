import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { SeriesBucket, SeriesFigures } from '#libs/contracts';
import { reportPeriod, startOfLocalDay } from '../rules/periods.js';
import { seriesBuckets, type SeriesBucketBounds } from '../rules/series-buckets.js';
import { DEFAULT_TIMEZONE, reportingTimezones } from './reporting-timezones.js';
import { scopeKey, type ScopeKey } from './rollup-query.repository.js';
import { SeriesQueryRepository } from './series-query.repository.js';
import type { SeriesScopeRef, SeriesSnapshot } from './series-snapshot.js';

interface Planned {
  scope: SeriesScopeRef;
  timezone: string;
  /** Where the buckets start: the period's start, for `all` the local day of the first counted minute (null: nothing counted, no buckets). */
  start: Date | null;
  end: Date;
}

/**
 * Computes the series of many scopes at one processing cutoff (DESIGN §7), with the same
 * manager (the same database snapshot) as the report snapshots, so each series sums to the
 * report of its scope. The periods are the reports' (reportPeriod); the buckets are those of
 * the platform's reporting timezone (seriesBuckets). Scopes with the same zone, granularity and
 * period share their buckets and one set-based read per rollup table; `all` series of a zone
 * share the buckets from the earliest first day among them, each keeping its own from its first
 * day on (the buckets before it hold nothing).
 */
@Injectable()
export class SeriesBuilder {
  /** Rollup rows read by the last build (the benchmark prints it). */
  lastRowsRead = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly query: SeriesQueryRepository,
  ) {}

  async build(scopes: SeriesScopeRef[], processedThrough: Date, producedAt: Date, manager: EntityManager = this.dataSource.manager): Promise<SeriesSnapshot[]> {
    this.lastRowsRead = 0;
    if (scopes.length === 0) return [];
    const timezones = await reportingTimezones(manager, [...new Set(scopes.map((s) => s.agentId))]);
    const allScopes = scopes.filter((s) => s.timeRange === 'all');
    const firstCounted = await this.query.firstCountedMinutes(uniqueScopes(allScopes), processedThrough, manager);

    const planned: Planned[] = scopes.map((scope) => {
      const timezone = timezones.get(scope.agentId) ?? DEFAULT_TIMEZONE;
      const period = reportPeriod(scope.timeRange, processedThrough, timezone);
      if (period.start !== null) return { scope, timezone, start: period.start, end: period.end };
      const first = firstCounted.get(scopeKey(scope.agentId, scope.traffic));
      return { scope, timezone, start: first ? startOfLocalDay(first, timezone) : null, end: period.end };
    });

    // Groups of scopes that share their buckets: same zone, granularity and period (`all`: same zone and granularity).
    const groups = new Map<string, Planned[]>();
    for (const plan of planned) {
      if (plan.start === null) continue;
      const from = plan.scope.timeRange === 'all' ? 'all' : plan.start.getTime();
      const key = `${plan.timezone}\u0000${plan.scope.granularity}\u0000${from}\u0000${plan.end.getTime()}`;
      groups.set(key, [...(groups.get(key) ?? []), plan]);
    }

    const bucketsOf = new Map<Planned, SeriesBucket[]>();
    for (const group of groups.values()) {
      const start = new Date(Math.min(...group.map((p) => p.start!.getTime())));
      const bounds = seriesBuckets({ start, end: group[0].end }, group[0].scope.granularity, group[0].timezone);
      const { sums, rowsRead } = await this.query.sumBuckets(bounds, uniqueScopes(group.map((p) => p.scope)), manager);
      this.lastRowsRead += rowsRead;
      for (const plan of group) {
        const figures = sums.get(scopeKey(plan.scope.agentId, plan.scope.traffic))!;
        // The scope's first day is one of the group's day edges (the same zone's local day starts).
        const from = bounds.findIndex((b) => b.start.getTime() === plan.start!.getTime());
        if (from < 0) throw new Error(`series bucket start ${plan.start!.toISOString()} is not an edge of its group`);
        bucketsOf.set(plan, present(bounds, figures).slice(from));
      }
    }

    return planned.map((plan) => ({
      ...plan.scope,
      start: plan.scope.timeRange === 'all' ? null : plan.start,
      end: plan.end,
      processedThrough,
      updatedAt: producedAt,
      timezone: plan.timezone,
      buckets: bucketsOf.get(plan) ?? [],
    }));
  }
}

function uniqueScopes(scopes: { agentId: string; traffic: string }[]): ScopeKey[] {
  return [...new Map(scopes.map((s) => [scopeKey(s.agentId, s.traffic), { agentId: s.agentId, traffic: s.traffic }])).values()];
}

function present(bounds: SeriesBucketBounds[], figures: SeriesFigures[]): SeriesBucket[] {
  return bounds.map((bucket, i) => ({ start_at: bucket.start.toISOString(), end_at: bucket.end.toISOString(), ...figures[i] }));
}
