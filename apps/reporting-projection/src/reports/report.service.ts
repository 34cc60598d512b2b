import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { ReportReply, ReportRequestDto } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SnapshotRepository } from '../publication/snapshot.repository.js';
import type { ScopeRef, Snapshot } from '../publication/snapshot.js';
import { PublishedCache } from './published-cache.js';
import { presentPreparing, presentReport } from './report.presenter.js';

/** Reports from published snapshots, cached in memory until the next publication (PublishedCache). */
@Injectable()
export class ReportService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly cache: PublishedCache<Snapshot>;

  constructor(
    private readonly nats: NatsClient,
    private readonly snapshots: SnapshotRepository,
    private readonly publication: PublicationService,
    private readonly env: ReportingProjectionEnv,
  ) {
    this.cache = new PublishedCache(env.REPORT_CACHE_ENTRIES);
  }

  onApplicationBootstrap(): void {
    this.cache.follow(this.nats.connection);
  }

  beforeApplicationShutdown(): void {
    this.cache.stop();
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
