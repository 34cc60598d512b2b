import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type Type } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { LOGGER, counter } from '#libs/observability';
import { NatsClient } from './nats-client.js';

/** An outbox row: an event written in the same transaction as the change it announces. */
export interface OutboxEvent<Payload = unknown> {
  event_id: string;
  subject: string;
  payload: Payload;
}

/** Where a service keeps its outbox (a table of its own schema). */
export interface OutboxStore {
  /** Rows written at least `olderThanMs` ago, oldest first, a page at a time. */
  pendingEvents(olderThanMs: number): Promise<OutboxEvent[]>;
  /** Deletes the rows JetStream acknowledged. */
  markPublished(eventIds: string[]): Promise<void>;
}

export interface OutboxRelayOptions {
  /** Metric and log name: `weave_<name>_events_published_total`, `…_publish_failures_total`. */
  name: string;
  /** What the events are, for the metrics' help text (e.g. "settings.timezone.changed events"). */
  describes: string;
  /** Rows younger than this are left to the request that wrote them. */
  sweepMinAgeMs?: number;
  sweepIntervalMs?: number;
  publishTimeoutMs?: number;
}

type PublishPath = 'immediate' | 'sweep';

/**
 * Publishes a transactional outbox to JetStream with Nats-Msg-Id = event_id: right after the
 * change commits (publishSoon), and by a sweep of leftovers — a crash, a NATS or JetStream outage
 * between commit and publish — at start and every few seconds. A row is deleted only after its
 * PubAck, so no event is lost; a repeat within the stream's duplicate window is dropped by the
 * server, and the consumers are idempotent for repeats after it (at least once is enough).
 *
 * A service provides a subclass naming its store: as a Nest provider it starts when the
 * application has booted and stops before it shuts down (stop waits for the publishes in
 * flight), before NATS drains.
 */
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private readonly inflight = new Set<Promise<void>>();
  private readonly encoder = new TextEncoder();
  private readonly published;
  private readonly failures;
  private readonly sweepMinAgeMs: number;
  private readonly sweepIntervalMs: number;
  private readonly publishTimeoutMs: number;

  constructor(
    private readonly nats: NatsClient,
    private readonly store: OutboxStore,
    private readonly logger: Logger,
    private readonly options: OutboxRelayOptions,
  ) {
    this.published = counter(`weave_${options.name}_events_published_total`, `${options.describes} published (PubAck received)`, ['path']);
    this.failures = counter(
      `weave_${options.name}_events_publish_failures_total`,
      `${options.describes} whose publish failed (left in the outbox for the sweep)`,
    );
    this.sweepMinAgeMs = options.sweepMinAgeMs ?? 2000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 5000;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 2000;
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  start(): void {
    void this.sweep(0);
    this.timer = setInterval(() => void this.sweep(this.sweepMinAgeMs), this.sweepIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([this.sweeping, ...this.inflight]);
  }

  /** Publishes committed events in the background; a failure leaves their rows for the sweep. */
  publishSoon(events: OutboxEvent[]): void {
    const tracked: Promise<void> = this.publishAll(events, 'immediate')
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }

  /**
   * Publishes the events at once, then deletes the acknowledged ones from the outbox; returns
   * their ids. Throws only when the delete fails (the rows stay and are published again).
   */
  async publishAll(events: OutboxEvent[], path: PublishPath): Promise<string[]> {
    const outcomes = await Promise.all(events.map((event) => this.publish(event, path)));
    const acknowledged = events.filter((_, i) => outcomes[i]).map((event) => event.event_id);
    try {
      await this.store.markPublished(acknowledged);
    } catch (error) {
      // Published but still in the outbox: the sweep publishes them again (deduplicated).
      this.logger.warn({ err: (error as Error).message, events: acknowledged.length, outbox: this.options.name }, 'outbox rows not deleted');
      throw error;
    }
    return acknowledged;
  }

  /** Publishes leftovers older than `minAgeMs`, a page at a time, until a publish fails. */
  sweep(minAgeMs: number): Promise<void> {
    if (this.sweeping) return this.sweeping;
    this.sweeping = (async () => {
      try {
        for (;;) {
          const pending = await this.store.pendingEvents(minAgeMs);
          if (pending.length === 0) break;
          const acknowledged = await this.publishAll(pending, 'sweep');
          if (acknowledged.length < pending.length) break;
        }
      } catch (error) {
        this.logger.warn({ err: (error as Error).message, outbox: this.options.name }, 'outbox sweep failed; retrying later');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  private async publish(event: OutboxEvent, path: PublishPath): Promise<boolean> {
    try {
      await this.nats.pubAcks.publish(event.subject, this.encoder.encode(JSON.stringify(event.payload)), {
        msgID: event.event_id,
        timeout: this.publishTimeoutMs,
      });
      this.published.inc({ path });
      return true;
    } catch (error) {
      this.failures.inc();
      this.logger.warn({ err: (error as Error).message, event_id: event.event_id, outbox: this.options.name }, 'event not published yet; the relay retries');
      return false;
    }
  }
}

/**
 * The injectable relay of one outbox: an OutboxRelay that publishes from the provider `store`
 * (an OutboxRepository), with the NatsClient and the LOGGER of the application.
 */
export function OutboxRelayOf(store: Type<OutboxStore>, options: OutboxRelayOptions): Type<OutboxRelay> {
  @Injectable()
  class Relay extends OutboxRelay {
    constructor(nats: NatsClient, @Inject(store) outbox: OutboxStore, @Inject(LOGGER) logger: Logger) {
      super(nats, outbox, logger, options);
    }
  }
  return Relay;
}
