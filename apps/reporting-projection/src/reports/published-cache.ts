import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BroadcastSubjects } from '#libs/contracts';

/**
 * Published snapshots (reports, series) kept in memory until the next publication is announced
 * on `reporting.v1.published` (any replica may publish), so that a request is a map lookup, not
 * a query. A read that raced with an announcement is answered but not kept.
 */
export class PublishedCache<T> {
  private readonly entries = new Map<string, T>();
  /** Bumped by every publication, so a read that raced with it does not cache an old snapshot. */
  private generation = 0;
  private subscription?: Subscription;

  constructor(private readonly maxEntries: number) {}

  /** Drops everything whenever a publication is announced. */
  follow(connection: NatsConnection): void {
    this.subscription = connection.subscribe(BroadcastSubjects.reportsPublished, { callback: () => this.forget() });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  async get(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const loaded = await load();
    if (loaded !== undefined && generation === this.generation) this.remember(key, loaded);
    return loaded;
  }

  private forget(): void {
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
