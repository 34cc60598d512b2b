import type { PreparingReport, Report } from '#libs/contracts';
import { RawJson } from '#libs/nats';
import type { PublicationService } from '../publication/publication.service.js';
import type { ScopeRef } from '../publication/snapshot.js';
import { reportStatus } from '../rules/coverage.js';
import type { PublishedCache } from './published-cache.js';
import { presentPreparing } from './report.presenter.js';

type Status = Report['status'];

interface Kept<S> {
  snapshot: S;
  /** The reply serialized once per status, not per request (the read path's hot spot, issue 15). */
  json: Partial<Record<Status, RawJson>>;
}

/**
 * The replies of one kind of published snapshot (reports, series): the snapshot found once per
 * publication (PublishedCache), its JSON serialized once per status, the status (ready or stale)
 * decided at read time.
 */
export class PublishedReplies<S extends { processedThrough: Date }> {
  constructor(
    private readonly cache: PublishedCache<Kept<S>>,
    private readonly staleAfterMs: number,
    private readonly present: (snapshot: S, status: Status) => object,
  ) {}

  /** The reply for the snapshot under `key`, or undefined when none was published yet. */
  async reply(key: string, find: () => Promise<S | null | undefined>): Promise<RawJson | undefined> {
    const kept = await this.cache.get(key, async () => {
      const snapshot = await find();
      return snapshot ? { snapshot, json: {} } : undefined;
    });
    if (!kept) return undefined;
    const status = reportStatus(kept.snapshot.processedThrough, new Date(), this.staleAfterMs);
    return (kept.json[status] ??= RawJson.of(JSON.stringify(this.present(kept.snapshot, status))));
  }
}

/**
 * The answer to the first request of a scope (DESIGN §5): the scope registered (a series or a
 * breakdown together with its report scope), its report scope prepared at once in the
 * background, and the PreparingReport meanwhile.
 */
export async function prepareFirstRequest(publication: PublicationService, scope: ScopeRef, register: () => Promise<unknown>): Promise<PreparingReport> {
  await register();
  const report: ScopeRef = { agentId: scope.agentId, traffic: scope.traffic, timeRange: scope.timeRange };
  void publication.prepare(report);
  return presentPreparing(report.agentId, report.traffic, report.timeRange);
}
