import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { BroadcastSubjects } from '#libs/contracts';
import { NatsClient } from '#libs/nats';

/**
 * Published snapshots (reports, series) kept in memory until the next publication is announced,
 * so that a request is a map lookup, not a query. A read that raced with an announcement is
 * answered but not kept.
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

  forget(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private remember(key: string, value: T): void {
    if (this.maxEntries === 0) return;
    // Evict the oldest entry (Map keeps insertion order).
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
}

/** The caches of published snapshots, all dropped whenever a publication is announced on `reporting.v1.published` (any replica may publish). */
@Injectable()
export class PublishedCaches implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly caches: PublishedCache<unknown>[] = [];
  private subscription?: Subscription;

  constructor(private readonly nats: NatsClient) {}

  create<T>(maxEntries: number): PublishedCache<T> {
    const cache = new PublishedCache<T>(maxEntries);
    this.caches.push(cache as PublishedCache<unknown>);
    return cache;
  }

  onApplicationBootstrap(): void {
    this.subscription = this.nats.connection.subscribe(BroadcastSubjects.reportsPublished, { callback: () => this.caches.forEach((cache) => cache.forget()) });
  }

  beforeApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }
}
