import { Injectable } from '@nestjs/common';
import type { ReportReply, ReportRequestDto } from '#libs/contracts';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SnapshotRepository } from '../publication/snapshot.repository.js';
import type { ScopeRef, Snapshot } from '../publication/snapshot.js';
import { PublishedCaches, type PublishedCache } from './published-cache.js';
import { presentPreparing, presentReport } from './report.presenter.js';

/** Reports from published snapshots, cached in memory until the next publication (PublishedCache). */
@Injectable()
export class ReportService {
  private readonly cache: PublishedCache<Snapshot>;

  constructor(
    private readonly snapshots: SnapshotRepository,
    private readonly publication: PublicationService,
    private readonly env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.cache = caches.create(env.REPORT_CACHE_ENTRIES);
  }

  async report(request: ReportRequestDto): Promise<ReportReply> {
    const scope: ScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range };
    const key = `${scope.agentId}\u0000${scope.traffic}\u0000${scope.timeRange}`;
    const snapshot = await this.cache.get(key, () => this.snapshots.find(scope));
    if (snapshot) return presentReport(snapshot, new Date(), this.env.REPORTING_STALE_AFTER_MS);
    await this.snapshots.register(scope);
    void this.publication.prepare(scope);
    return presentPreparing(scope.agentId, scope.traffic, scope.timeRange);
  }
}
