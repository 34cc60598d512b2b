import { Injectable } from '@nestjs/common';
import type { PreparingReport, ReportRequestDto, SeriesRequestDto } from '#libs/contracts';
import type { RawJson } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SeriesSnapshotRepository } from '../publication/series-snapshot.repository.js';
import { seriesScopeKey, type SeriesScopeRef, type SeriesSnapshot } from '../publication/series-snapshot.js';
import { SnapshotRepository } from '../publication/snapshot.repository.js';
import { reportScopeKey, type ScopeRef, type Snapshot } from '../publication/snapshot.js';
import { PublishedCaches } from './published-cache.js';
import { PublishedReplies, prepareFirstRequest } from './published-replies.js';
import { presentReport } from './report.presenter.js';
import { presentSeries } from './series.presenter.js';

/**
 * Reports and series (DESIGN §7) from published snapshots, cached in memory until a publication
 * replaces them (PublishedReplies; a 90-day series is about 13 kB of JSON, serialized once). A
 * scope seen for the first time is registered and prepared at once (prepareFirstRequest).
 */
@Injectable()
export class ReportService {
  private readonly reports: PublishedReplies<Snapshot>;
  private readonly series: PublishedReplies<SeriesSnapshot>;

  constructor(
    private readonly snapshots: SnapshotRepository,
    private readonly seriesSnapshots: SeriesSnapshotRepository,
    private readonly publication: PublicationService,
    env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.reports = new PublishedReplies(caches.create(env.REPORT_CACHE_ENTRIES), env.REPORTING_STALE_AFTER_MS, presentReport);
    this.series = new PublishedReplies(caches.create(env.REPORT_CACHE_ENTRIES), env.REPORTING_STALE_AFTER_MS, presentSeries);
  }

  /** The published report, or the PreparingReport of DESIGN §5 for a scope seen for the first time. */
  async report(request: ReportRequestDto): Promise<RawJson | PreparingReport> {
    const scope: ScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range };
    const reply = await this.reports.reply(reportScopeKey(scope), () => this.snapshots.find(scope));
    return reply ?? prepareFirstRequest(this.publication, scope, () => this.snapshots.register(scope));
  }

  /** The published series, or the PreparingReport for a series seen for the first time (registered together with its report scope). */
  async seriesOf(request: SeriesRequestDto): Promise<RawJson | PreparingReport> {
    const scope: SeriesScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range, granularity: request.granularity };
    const reply = await this.series.reply(seriesScopeKey(scope), () => this.seriesSnapshots.find(scope));
    return reply ?? prepareFirstRequest(this.publication, scope, () => this.seriesSnapshots.register(scope));
  }
}
