import { Injectable } from '@nestjs/common';
import type { PreparingReport, ReportSeries, SeriesRequestDto } from '#libs/contracts';
import { RawJson } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SeriesSnapshotRepository } from '../publication/series-snapshot.repository.js';
import { seriesScopeKey, type SeriesScopeRef, type SeriesSnapshot } from '../publication/series-snapshot.js';
import { reportStatus } from '../rules/coverage.js';
import { PublishedCaches, type PublishedCache } from './published-cache.js';
import { presentPreparing } from './report.presenter.js';
import { presentSeries } from './series.presenter.js';

interface CachedSeries {
  snapshot: SeriesSnapshot;
  /** The reply serialized once per status (a 90-day series is about 13 kB of JSON). */
  json: Partial<Record<ReportSeries['status'], RawJson>>;
}

/**
 * Series from published snapshots (DESIGN §7), cached in memory until the next publication like
 * reports. A series not registered yet is registered together with its report scope and
 * prepared at once at the last published cutoff (the 202 of DESIGN §5 meanwhile).
 */
@Injectable()
export class SeriesService {
  private readonly cache: PublishedCache<CachedSeries>;

  constructor(
    private readonly snapshots: SeriesSnapshotRepository,
    private readonly publication: PublicationService,
    private readonly env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.cache = caches.create(env.REPORT_CACHE_ENTRIES);
  }

  async series(request: SeriesRequestDto): Promise<RawJson | PreparingReport> {
    const scope: SeriesScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range, granularity: request.granularity };
    const cached = await this.cache.get(seriesScopeKey(scope), async () => {
      const snapshot = await this.snapshots.find(scope);
      return snapshot && { snapshot, json: {} };
    });
    if (cached) {
      const status = reportStatus(cached.snapshot.processedThrough, new Date(), this.env.REPORTING_STALE_AFTER_MS);
      return (cached.json[status] ??= RawJson.of(JSON.stringify(presentSeries(cached.snapshot, status))));
    }
    await this.snapshots.register(scope);
    void this.publication.prepare({ agentId: scope.agentId, traffic: scope.traffic, timeRange: scope.timeRange });
    return presentPreparing(scope.agentId, scope.traffic, scope.timeRange);
  }
}
