import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { DataSource } from 'typeorm';
import { Durables, SettingsSubjects, Streams, TimezoneChangedEventDto } from '#libs/contracts';
import { LOGGER } from '#libs/bootstrap';
import { isTransientDatabaseError } from '#libs/database';
import { JetStreamBatchConsumer, NatsClient, ensureDurableConsumer, type InboundMessage, type MessageOutcome } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';

const decoder = new TextDecoder();

type Decoded = { ok: true; event: TimezoneChangedEventDto } | { ok: false; reason: string };

/** Validates a `settings.timezone.changed` payload against its contract (unknown fields are refused). */
export async function decodeTimezoneChanged(data: Uint8Array): Promise<Decoded> {
  let payload: unknown;
  try {
    payload = JSON.parse(decoder.decode(data));
  } catch {
    return { ok: false, reason: 'payload is not JSON' };
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { ok: false, reason: 'payload must be a JSON object' };
  const event = plainToInstance(TimezoneChangedEventDto, payload);
  const problems = await validate(event, { whitelist: true, forbidNonWhitelisted: true });
  if (problems.length > 0) {
    return { ok: false, reason: problems.flatMap((p) => Object.values(p.constraints ?? {})).join('; ') };
  }
  return { ok: true, event };
}

/**
 * Follows the reporting timezone of every platform (DESIGN §6: reporting learns timezones from
 * `settings.timezone.changed`, never from timezone-settings' tables). A durable consumer of
 * stream SETTINGS, so changes made while this service is down are applied when it returns.
 * A row is replaced only by a strictly newer updated_at: redeliveries, duplicates and
 * out-of-order events change nothing. The next publication computes `today` in the new zone.
 */
@Injectable()
export class TimezoneSettingsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: JetStreamBatchConsumer;

  constructor(
    private readonly nats: NatsClient,
    private readonly dataSource: DataSource,
    private readonly env: ReportingProjectionEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await ensureDurableConsumer(this.nats.manager, {
      stream: Streams.settings,
      durable: Durables.reportingSettings,
      filterSubject: SettingsSubjects.timezoneChanged,
      ackWaitMs: 30_000,
      maxAckPending: 1000,
    });
    this.consumer = new JetStreamBatchConsumer(
      this.nats,
      {
        stream: Streams.settings,
        durable: Durables.reportingSettings,
        batchSize: 100,
        fetchExpiresMs: 1000,
        maxDeliveries: this.env.INGEST_MAX_DELIVERIES,
        backoffBaseMs: 500,
        backoffMaxMs: 30_000,
        isTransient: isTransientDatabaseError,
      },
      (messages) => this.apply(messages),
      this.logger.child({ component: 'settings' }),
    );
    this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  /** One transaction per batch, in stream order; invalid events are dead-lettered. */
  async apply(messages: InboundMessage[]): Promise<MessageOutcome[]> {
    const decoded = await Promise.all(messages.map((m) => decodeTimezoneChanged(m.data)));
    await this.dataSource.transaction(async (manager) => {
      for (const d of decoded) {
        if (!d.ok) continue;
        await manager.query(
          `INSERT INTO reporting.platform_timezone (agent_id, timezone, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (agent_id) DO UPDATE SET timezone = EXCLUDED.timezone, updated_at = EXCLUDED.updated_at
            WHERE reporting.platform_timezone.updated_at < EXCLUDED.updated_at`,
          [d.event.agent_id, d.event.reporting_timezone, d.event.updated_at],
        );
      }
    });
    return decoded.map((d) => (d.ok ? { kind: 'applied' } : { kind: 'dead-letter', reason: d.reason, cause: 'invalid' }));
  }
}
