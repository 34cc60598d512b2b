import { Module } from '@nestjs/common';
import { SettingsModule } from './settings/settings.module.js';

/** timezone-settings: owns the reporting timezone of every platform. createTimezoneSettingsApp adds the InfrastructureModule. */
@Module({ imports: [SettingsModule] })
export class TimezoneSettingsModule {}
