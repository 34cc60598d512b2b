import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { BroadcastSubjects, type ReportReply, type ReportRequestDto } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PublicationService } from '../publication/publication.service.js';
import { SnapshotRepository } from '../publication/snapshot.repository.js';
import type { ScopeRef, Snapshot } from '../publication/snapshot.js';
import { presentPreparing, presentReport } from './report.presenter.js';

/**
 * Reports from published snapshots. Snapshots are cached in memory until the next publication
 * is announced on `reporting.v1.published` (any replica may publish), so a request is a map
 * lookup, not a query.
 */
@Injectable()
export class ReportService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly cache = new Map<string, Snapshot>();
  /** Bumped by every publication, so a read that raced with it does not cache an old snapshot. */
  private generation = 0;
  private subscription?: Subscription;

  constructor(
    private readonly nats: NatsClient,
    private readonly snapshots: SnapshotRepository,
    private readonly publication: PublicationService,
    private readonly env: ReportingProjectionEnv,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.nats.connection.subscribe(BroadcastSubjects.reportsPublished, { callback: () => this.forget() });
  }

  beforeApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  async report(request: ReportRequestDto): Promise<ReportReply> {
    const scope: ScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range };
    const key = `${scope.agentId}\u0000${scope.traffic}\u0000${scope.timeRange}`;
    let snapshot = this.cache.get(key);
    if (!snapshot) {
      const generation = this.generation;
      snapshot = await this.snapshots.find(scope);
      if (snapshot && generation === this.generation) this.remember(key, snapshot);
    }
    if (snapshot) return presentReport(snapshot, new Date(), this.env.REPORTING_STALE_AFTER_MS);
    await this.snapshots.register(scope);
    void this.publication.prepare(scope);
    return presentPreparing(scope.agentId, scope.traffic, scope.timeRange);
  }

  private forget(): void {
    this.generation += 1;
    this.cache.clear();
  }

  private remember(key: string, snapshot: Snapshot): void {
    if (this.env.REPORT_CACHE_ENTRIES === 0) return;
    if (this.cache.size >= this.env.REPORT_CACHE_ENTRIES) {
      // Evict the oldest entry (Map keeps insertion order).
      this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(key, snapshot);
  }
}
