import { Injectable } from '@nestjs/common';
import type { PreparingReport, SeriesRequestDto } from '#libs/contracts';
import type { RawJson } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SeriesSnapshotRepository } from '../publication/series-snapshot.repository.js';
import { seriesScopeKey, type SeriesScopeRef, type SeriesSnapshot } from '../publication/series-snapshot.js';
import { PublishedCaches } from './published-cache.js';
import { PublishedReplies } from './published-replies.js';
import { presentPreparing } from './report.presenter.js';
import { presentSeries } from './series.presenter.js';

/**
 * Series from published snapshots (DESIGN §7), cached like reports (a 90-day series is about
 * 13 kB of JSON, serialized once). A series not registered yet is registered together with its
 * report scope and prepared at once at the last published cutoff (the 202 of DESIGN §5 meanwhile).
 */
@Injectable()
export class SeriesService {
  private readonly replies: PublishedReplies<SeriesSnapshot>;

  constructor(
    private readonly snapshots: SeriesSnapshotRepository,
    private readonly publication: PublicationService,
    env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.replies = new PublishedReplies(caches.create(env.REPORT_CACHE_ENTRIES), env.REPORTING_STALE_AFTER_MS, presentSeries);
  }

  async series(request: SeriesRequestDto): Promise<RawJson | PreparingReport> {
    const scope: SeriesScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range, granularity: request.granularity };
    const reply = await this.replies.reply(seriesScopeKey(scope), () => this.snapshots.find(scope));
    if (reply) return reply;
    await this.snapshots.register(scope);
    void this.publication.prepare({ agentId: scope.agentId, traffic: scope.traffic, timeRange: scope.timeRange });
    return presentPreparing(scope.agentId, scope.traffic, scope.timeRange);
  }
}
