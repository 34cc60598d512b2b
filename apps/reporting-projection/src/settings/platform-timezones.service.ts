import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { decodeTimezoneChanged } from './timezone-event-decoder.js';

/**
 * The reporting timezone of every platform, as reporting knows it (DESIGN §6: reporting learns
 * timezones from `settings.timezone.changed`, never from timezone-settings' tables). A row is
 * replaced only by a strictly newer updated_at: redeliveries, duplicates and out-of-order
 * events change nothing. The next publication computes `today` in the new zone.
 */
// Raw SQL: an upsert guarded by a newer updated_at, in the projection schema that has no entities.
@Injectable()
export class PlatformTimezonesService {
  constructor(private readonly dataSource: DataSource) {}

  /** One transaction per batch, in stream order; invalid events are dead-lettered. */
  async applyBatch(messages: InboundMessage[]): Promise<MessageOutcome[]> {
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
