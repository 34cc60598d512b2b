import { Injectable } from '@nestjs/common';
import type { BreakdownRequestDto, PreparingReport, ReportBreakdown } from '#libs/contracts';
import { RawJson } from '#libs/nats';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { BreakdownSnapshotRepository } from '../publication/breakdown-snapshot.repository.js';
import { breakdownScopeKey, type BreakdownScopeRef, type BreakdownSnapshot } from '../publication/breakdown-snapshot.js';
import { PublicationService } from '../publication/publication.service.js';
import { reportStatus } from '../rules/coverage.js';
import { presentBreakdown } from './breakdown.presenter.js';
import { PublishedCaches, type PublishedCache } from './published-cache.js';
import { prepareFirstRequest } from './published-replies.js';

interface Kept {
  snapshot: BreakdownSnapshot;
  /** Replies serialized once per (status, sort, limit) and publication. */
  json: Map<string, RawJson>;
}

/**
 * Breakdowns from published snapshots (DESIGN §9), kept in memory like reports and series
 * (PublishedCaches): a request is a map lookup, a slice of at most 100 rows and, once per
 * publication and (status, sort, limit), a serialization. A breakdown not registered yet is
 * registered with its report scope and prepared at once (the 202 of DESIGN §5 meanwhile).
 */
@Injectable()
export class BreakdownService {
  private readonly cache: PublishedCache<Kept>;
  private readonly staleAfterMs: number;

  constructor(
    private readonly snapshots: BreakdownSnapshotRepository,
    private readonly publication: PublicationService,
    env: ReportingProjectionEnv,
    caches: PublishedCaches,
  ) {
    this.cache = caches.create(env.REPORT_CACHE_ENTRIES);
    this.staleAfterMs = env.REPORTING_STALE_AFTER_MS;
  }

  async breakdown(request: BreakdownRequestDto): Promise<RawJson | PreparingReport> {
    const scope: BreakdownScopeRef = { agentId: request.agent_id, traffic: request.traffic, timeRange: request.time_range, by: request.by };
    const kept = await this.cache.get(breakdownScopeKey(scope), async () => {
      const snapshot = await this.snapshots.find(scope);
      return snapshot ? { snapshot, json: new Map() } : undefined;
    });
    if (kept) {
      const status: ReportBreakdown['status'] = reportStatus(kept.snapshot.processedThrough, new Date(), this.staleAfterMs);
      const key = `${status}\u0000${request.sort}\u0000${request.limit}`;
      let json = kept.json.get(key);
      if (!json) kept.json.set(key, (json = RawJson.of(JSON.stringify(presentBreakdown(kept.snapshot, status, request.sort, request.limit)))));
      return json;
    }
    return prepareFirstRequest(this.publication, scope, () => this.snapshots.register(scope));
  }
}
