import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { DataSource, type Repository } from 'typeorm';
import {
  DEFAULT_REPORTING_TIMEZONE,
  SettingsSubjects,
  isIanaTimezone,
  type RpcError,
  type TimezoneChangedEventDto,
  type TimezoneSetResult,
  type TimezoneSetting,
} from '#libs/contracts';
import type { OutboxEventRow } from '#libs/database';
import { PlatformTimezoneEntity } from './platform-timezone.entity.js';
import { TimezoneEventsOutbox } from './timezone-events.relay.js';

/** An outbox row written in the same transaction as the change it announces. */
export type PendingEvent = OutboxEventRow<TimezoneChangedEventDto>;

/**
 * The reporting timezone of each platform (schema timezone_settings, through its TypeORM
 * entities). A platform without a row reports in UTC. A change writes the new value and its
 * `settings.timezone.changed` event in one transaction (outbox); setting the value already in
 * force changes nothing and emits nothing.
 */
@Injectable()
export class TimezoneSettingsService {
  private readonly timezones: Repository<PlatformTimezoneEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: TimezoneEventsOutbox,
  ) {
    this.timezones = dataSource.getRepository(PlatformTimezoneEntity);
  }

  async get(agentId: string): Promise<TimezoneSetting> {
    const row = await this.timezones.findOneBy({ agent_id: agentId });
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
      // Raw SQL: TypeORM has no advisory locks. It serializes the changes of one platform (a
      // missing row cannot be locked: the advisory lock can).
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('timezone_settings:' || $1, 0))`, [agentId]);
      const timezones = manager.getRepository(PlatformTimezoneEntity);
      const current = await timezones.findOneBy({ agent_id: agentId });
      if (current && current.reporting_timezone === timezone) {
        return { result: { agent_id: agentId, reporting_timezone: timezone, updated_at: current.updated_at.toISOString(), changed: false } };
      }
      // updated_at is whole milliseconds (what JSON carries) by the database's clock and strictly
      // increases per platform, so consumers ordering by it never take an older value for a newer one.
      const written = await timezones
        .createQueryBuilder()
        .insert()
        .values({
          agent_id: agentId,
          reporting_timezone: timezone,
          updated_at: () => `GREATEST(date_trunc('milliseconds', clock_timestamp()), :previous::timestamptz + interval '1 millisecond')`,
        })
        .orUpdate(['reporting_timezone', 'updated_at'], ['agent_id'])
        .setParameter('previous', current?.updated_at ?? new Date(0))
        .returning(['updated_at'])
        .updateEntity(false)
        .execute();
      const updatedAt = (written.raw as Pick<PlatformTimezoneEntity, 'updated_at'>[])[0].updated_at.toISOString();
      if (!current && timezone === DEFAULT_REPORTING_TIMEZONE) {
        // Setting the default explicitly is recorded (so updated_at exists) but is no change
        // for reporting, which already uses UTC: no event.
        return { result: { agent_id: agentId, reporting_timezone: timezone, updated_at: updatedAt, changed: false } };
      }
      const eventId = `tzc_${randomUUID()}`;
      const event: PendingEvent = {
        event_id: eventId,
        subject: SettingsSubjects.timezoneChanged,
        payload: { agent_id: agentId, reporting_timezone: timezone, updated_at: updatedAt, event_id: eventId },
      };
      await this.outbox.add(manager, [event]);
      return { result: { agent_id: agentId, reporting_timezone: timezone, updated_at: updatedAt, changed: true }, event };
    });
  }
}
