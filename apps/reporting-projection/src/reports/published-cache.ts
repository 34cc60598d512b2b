import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { invalidateOnBroadcast, type BroadcastInvalidation, type Invalidatable } from '#libs/cache';
import { BroadcastSubjects, decodeReportsPublished } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { reportScopeKey } from '../publication/snapshot.js';

/**
 * Published snapshots (reports, series) kept in memory until a publication replacing them is
 * announced, so that a request is a map lookup, not a query. A read that raced with an
 * announcement is answered but not kept.
 */
export class PublishedCache<T> {
  private readonly entries = new Map<string, T>();
  /** Bumped by every publication, so a read that raced with it does not cache an old snapshot. */
  private generation = 0;

  constructor(private readonly maxEntries: number) {}

  async get(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const loaded = await load();
    if (loaded !== undefined && generation === this.generation) this.remember(key, loaded);
    return loaded;
  }

  /** Drops everything (a publication cycle replaced every snapshot). */
  forget(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /**
   * Drops the entries of one report scope: the key `scope` itself and the keys under it
   * (`scope` + NUL + more, as series keys extend their report's). Loads in flight are not kept,
   * whatever their scope (simpler than a generation per scope, and as safe).
   */
  forgetScope(scope: string): void {
    this.generation += 1;
    const under = `${scope}\u0000`;
    for (const key of this.entries.keys()) if (key === scope || key.startsWith(under)) this.entries.delete(key);
  }

  private remember(key: string, value: T): void {
    if (this.maxEntries === 0) return;
    // Evict the oldest entry (Map keeps insertion order).
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
}

/**
 * The caches of published snapshots, kept in step with the announcements on
 * `reporting.v1.published` (any replica may publish): a cycle (empty body) drops everything, the
 * first preparation of a scope drops that scope alone.
 */
@Injectable()
export class PublishedCaches implements Invalidatable, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly caches: PublishedCache<unknown>[] = [];
  private invalidation?: BroadcastInvalidation;

  constructor(private readonly nats: NatsClient) {}

  create<T>(maxEntries: number): PublishedCache<T> {
    const cache = new PublishedCache<T>(maxEntries);
    this.caches.push(cache as PublishedCache<unknown>);
    return cache;
  }

  /** Drops one report scope's entries (its report and series) in every cache. */
  invalidate(scope: string): void {
    this.caches.forEach((cache) => cache.forgetScope(scope));
  }

  flush(): void {
    this.caches.forEach((cache) => cache.forget());
  }

  /** The shared broadcast mechanism (#libs/cache), which also drops everything on a NATS disconnect or reconnect: announcements may have been missed. */
  onApplicationBootstrap(): void {
    this.invalidation = invalidateOnBroadcast(this.nats.connection, this, {
      subject: BroadcastSubjects.reportsPublished,
      scopesOf: (data) => {
        const scope = decodeReportsPublished(data);
        return scope ? [reportScopeKey({ agentId: scope.agent_id, traffic: scope.traffic, timeRange: scope.time_range })] : { flush: 'published' };
      },
    });
  }

  beforeApplicationShutdown(): void {
    this.invalidation?.stop();
  }
}
