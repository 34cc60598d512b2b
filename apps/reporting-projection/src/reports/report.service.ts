import { Injectable } from '@nestjs/common';
import type { PreparingReport, Report, ReportRequestDto } from '#libs/contracts';
import { RawJson } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SnapshotRepository } from '../publication/snapshot.repository.js';
import { reportScopeKey, type ScopeRef, type Snapshot } from '../publication/snapshot.js';
import { reportStatus } from '../rules/coverage.js';
import { PublishedCaches, type PublishedCache } from './published-cache.js';
import { presentPreparing, presentReport } from './report.presenter.js';

interface CachedReport {
  snapshot: Snapshot;
  /** The reply serialized once per status, not per request (the read path's hot spot, issue 15). */
  json: Partial<Record<Report['status'], RawJson>>;
}

/** Reports from published snapshots, cached in memory until the next publication (PublishedCache), each answered as the JSON serialized once. */
@Injectable()
export class ReportService {
  private readonly cache: PublishedCache<CachedReport>;

  constructor(
    private readonly snapshots: SnapshotRepository,
    private readonly publication: PublicationService,
    private readonly env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.cache = caches.create(env.REPORT_CACHE_ENTRIES);
  }

  async report(request: ReportRequestDto): Promise<RawJson | PreparingReport> {
    const scope: ScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range };
    const cached = await this.cache.get(reportScopeKey(scope), async () => {
      const snapshot = await this.snapshots.find(scope);
      return snapshot && { snapshot, json: {} };
    });
    if (cached) {
      const now = new Date();
      const status = reportStatus(cached.snapshot.processedThrough, now, this.env.REPORTING_STALE_AFTER_MS);
      return (cached.json[status] ??= RawJson.of(JSON.stringify(presentReport(cached.snapshot, now, this.env.REPORTING_STALE_AFTER_MS))));
    }
    await this.snapshots.register(scope);
    void this.publication.prepare(scope);
    return presentPreparing(scope.agentId, scope.traffic, scope.timeRange);
  }
}
