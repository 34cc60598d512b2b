import { Module } from '@nestjs/common';
import { TimezoneEventsOutbox, TimezoneEventsRelay } from './timezone-events.relay.js';
import { TimezoneSettingsController } from './timezone-settings.controller.js';
import { TimezoneSettingsService } from './timezone-settings.service.js';

/** The reporting timezone of each platform: get/set over NATS, changes announced through the outbox. */
@Module({
  controllers: [TimezoneSettingsController],
  providers: [TimezoneEventsOutbox, TimezoneSettingsService, TimezoneEventsRelay],
})
export class SettingsModule {}
