import { Injectable } from '@nestjs/common';
import type { PreparingReport, ReportRequestDto } from '#libs/contracts';
import type { RawJson } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SnapshotRepository } from '../publication/snapshot.repository.js';
import { reportScopeKey, type ScopeRef, type Snapshot } from '../publication/snapshot.js';
import { PublishedCaches } from './published-cache.js';
import { PublishedReplies } from './published-replies.js';
import { presentPreparing, presentReport } from './report.presenter.js';

/** Reports from published snapshots, cached in memory until a publication replaces them (PublishedReplies). */
@Injectable()
export class ReportService {
  private readonly replies: PublishedReplies<Snapshot>;

  constructor(
    private readonly snapshots: SnapshotRepository,
    private readonly publication: PublicationService,
    env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.replies = new PublishedReplies(caches.create(env.REPORT_CACHE_ENTRIES), env.REPORTING_STALE_AFTER_MS, presentReport);
  }

  /** The published report, or the PreparingReport of DESIGN §5 for a scope seen for the first time (registered and prepared at once). */
  async report(request: ReportRequestDto): Promise<RawJson | PreparingReport> {
    const scope: ScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range };
    const reply = await this.replies.reply(reportScopeKey(scope), () => this.snapshots.find(scope));
    if (reply) return reply;
    await this.snapshots.register(scope);
    void this.publication.prepare(scope);
    return presentPreparing(scope.agentId, scope.traffic, scope.timeRange);
  }
}
