import { Module } from '@nestjs/common';
import { Durables, SettingsSubjects, Streams } from '#libs/contracts';
import { durableConsumerProvider } from '#libs/bootstrap';
import { ReportingProjectionEnv } from '../config/reporting-projection.env.js';
import { PlatformTimezonesService } from './platform-timezones.service.js';

/**
 * Follows `settings.timezone.changed` with a durable consumer of stream SETTINGS, so changes
 * made while this service is down are applied when it returns.
 */
@Module({
  providers: [
    PlatformTimezonesService,
    durableConsumerProvider('settings', {
      inject: [PlatformTimezonesService, ReportingProjectionEnv],
      useFactory: (timezones: PlatformTimezonesService, env: ReportingProjectionEnv) => ({
        consumer: {
          stream: Streams.settings,
          durable: Durables.reportingSettings,
          filterSubject: SettingsSubjects.timezoneChanged,
          ackWaitMs: 30_000,
          maxAckPending: 1000,
        },
        batchSize: 100,
        maxDeliveries: env.INGEST_MAX_DELIVERIES,
        handler: (messages) => timezones.applyBatch(messages),
      }),
    }),
  ],
})
export class SettingsModule {}
