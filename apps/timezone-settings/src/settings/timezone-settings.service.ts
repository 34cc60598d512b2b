import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import {
  DEFAULT_REPORTING_TIMEZONE,
  SettingsSubjects,
  isIanaTimezone,
  type RpcError,
  type TimezoneChangedEventDto,
  type TimezoneSetResult,
  type TimezoneSetting,
} from '#libs/contracts';

interface Row {
  agent_id: string;
  reporting_timezone: string;
  updated_at: Date;
}

/** An outbox row written in the same transaction as the change it announces. */
export interface PendingEvent {
  event_id: string;
  subject: string;
  payload: TimezoneChangedEventDto;
}

/**
 * The reporting timezone of each platform (schema timezone_settings). A platform without a row
 * reports in UTC. A change writes the new value and its `settings.timezone.changed` event in
 * one transaction (outbox); setting the value already in force changes nothing and emits nothing.
 */
@Injectable()
export class TimezoneSettingsService {
  constructor(private readonly dataSource: DataSource) {}

  async get(agentId: string): Promise<TimezoneSetting> {
    const [row]: Row[] = await this.dataSource.query(
      `SELECT agent_id, reporting_timezone, updated_at FROM timezone_settings.platform_timezone WHERE agent_id = $1`,
      [agentId],
    );
    if (!row) return { agent_id: agentId, reporting_timezone: DEFAULT_REPORTING_TIMEZONE, updated_at: null };
    return { agent_id: row.agent_id, reporting_timezone: row.reporting_timezone, updated_at: row.updated_at.toISOString() };
  }

  /** Sets the zone; returns the setting and, when it changed, the event to publish after commit. */
  async set(agentId: string, timezone: string): Promise<{ result: TimezoneSetResult; event?: PendingEvent }> {
    // The DTO already checked it; this is the owner of the rule, so it checks again.
    if (!isIanaTimezone(timezone)) {
      throw new RpcException({ code: 'invalid_request', message: 'reporting_timezone must be an IANA time zone name such as "Asia/Kathmandu"' } satisfies RpcError);
    }
    return this.dataSource.transaction(async (manager) => {
      // Serialize changes of one platform (a missing row cannot be locked: the advisory lock can).
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('timezone_settings:' || $1, 0))`, [agentId]);
      const [current]: Row[] = await manager.query(
        `SELECT agent_id, reporting_timezone, updated_at FROM timezone_settings.platform_timezone WHERE agent_id = $1`,
        [agentId],
      );
      if (current && current.reporting_timezone === timezone) {
        return { result: { agent_id: agentId, reporting_timezone: timezone, updated_at: current.updated_at.toISOString(), changed: false } };
      }
      if (!current && timezone === DEFAULT_REPORTING_TIMEZONE) {
        // Setting the default explicitly is recorded (so updated_at exists) but is no change
        // for reporting, which already uses UTC: no event.
        const [row]: Row[] = await manager.query(
          `INSERT INTO timezone_settings.platform_timezone (agent_id, reporting_timezone, updated_at)
           VALUES ($1, $2, date_trunc('milliseconds', clock_timestamp())) RETURNING agent_id, reporting_timezone, updated_at`,
          [agentId, timezone],
        );
        return { result: { agent_id: agentId, reporting_timezone: timezone, updated_at: row.updated_at.toISOString(), changed: false } };
      }
      // updated_at is whole milliseconds (what JSON carries) and strictly increases per
      // platform, so consumers ordering by it never take an older value for a newer one.
      const [row]: Row[] = await manager.query(
        `INSERT INTO timezone_settings.platform_timezone (agent_id, reporting_timezone, updated_at)
         VALUES ($1, $2, GREATEST(date_trunc('milliseconds', clock_timestamp()), $3::timestamptz + interval '1 millisecond'))
         ON CONFLICT (agent_id) DO UPDATE SET reporting_timezone = EXCLUDED.reporting_timezone, updated_at = EXCLUDED.updated_at
         RETURNING agent_id, reporting_timezone, updated_at`,
        [agentId, timezone, current?.updated_at ?? new Date(0)],
      );
      const updatedAt = row.updated_at.toISOString();
      const event: PendingEvent = {
        event_id: `tzc_${randomUUID()}`,
        subject: SettingsSubjects.timezoneChanged,
        payload: { agent_id: agentId, reporting_timezone: timezone, updated_at: updatedAt, event_id: '' },
      };
      event.payload.event_id = event.event_id;
      await manager.query(`INSERT INTO timezone_settings.outbox (event_id, subject, payload) VALUES ($1, $2, $3)`, [
        event.event_id,
        event.subject,
        JSON.stringify(event.payload),
      ]);
      return { result: { agent_id: agentId, reporting_timezone: timezone, updated_at: updatedAt, changed: true }, event };
    });
  }

  /** Outbox rows older than `olderThanMs` (the relay's sweep), oldest first. */
  async pendingEvents(olderThanMs: number, limit = 100): Promise<PendingEvent[]> {
    return this.dataSource.query(
      `SELECT event_id, subject, payload FROM timezone_settings.outbox
        WHERE created_at <= now() - ($1::int * interval '1 millisecond')
        ORDER BY created_at, event_id LIMIT $2`,
      [olderThanMs, limit],
    );
  }

  async markPublished(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.dataSource.query(`DELETE FROM timezone_settings.outbox WHERE event_id = ANY($1::text[])`, [eventIds]);
  }
}
