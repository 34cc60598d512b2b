import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { LOGGER } from '#libs/bootstrap';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { TimezoneSettingsService, type PendingEvent } from './timezone-settings.service.js';

const published = counter('weave_settings_events_published_total', 'settings.timezone.changed events published', ['path']);

/** Rows younger than this are left to the request that wrote them. */
const SWEEP_MIN_AGE_MS = 2000;
const SWEEP_INTERVAL_MS = 5000;

/**
 * Publishes outbox rows to JetStream (stream SETTINGS) with Nats-Msg-Id = event_id, right
 * after the change commits, and sweeps leftovers (a crash or a NATS outage between commit and
 * publish) at start and every few seconds. A row is deleted only after JetStream acknowledged
 * it; a repeat within the duplicate window is dropped by the server, and consumers keep the
 * latest updated_at anyway, so at-least-once is enough.
 */
@Injectable()
export class TimezoneEventsRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private readonly encoder = new TextEncoder();
  private readonly inflight = new Set<Promise<boolean>>();

  constructor(
    private readonly nats: NatsClient,
    private readonly settings: TimezoneSettingsService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.sweep(0);
    this.timer = setInterval(() => void this.sweep(SWEEP_MIN_AGE_MS), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([this.sweeping, ...this.inflight]);
  }

  /** Publishes in the background; shutdown waits for it (a failure leaves the row for the sweep). */
  publishSoon(event: PendingEvent): void {
    const publishing = this.publish(event).finally(() => this.inflight.delete(publishing));
    this.inflight.add(publishing);
  }

  /** Publishes one event now; false (row kept for the sweep) when JetStream did not acknowledge. */
  async publish(event: PendingEvent, path: 'immediate' | 'sweep' = 'immediate'): Promise<boolean> {
    try {
      const h = natsHeaders();
      await this.nats.jetstream.publish(event.subject, this.encoder.encode(JSON.stringify(event.payload)), {
        msgID: event.event_id,
        headers: h,
        timeout: 2000,
      });
      published.inc({ path });
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, event_id: event.event_id }, 'settings event not published yet; the relay retries');
      return false;
    }
    try {
      await this.settings.markPublished(event.event_id);
    } catch (error) {
      // Published but still in the outbox: the sweep publishes it again (deduplicated).
      this.logger.warn({ err: (error as Error).message, event_id: event.event_id }, 'outbox row not deleted');
    }
    return true;
  }

  private sweep(minAgeMs: number): Promise<void> {
    if (this.sweeping) return this.sweeping;
    this.sweeping = (async () => {
      try {
        for (const event of await this.settings.pendingEvents(minAgeMs)) {
          if (!(await this.publish(event, 'sweep'))) break;
        }
      } catch (error) {
        this.logger.warn({ err: (error as Error).message }, 'outbox sweep failed; retrying later');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }
}
