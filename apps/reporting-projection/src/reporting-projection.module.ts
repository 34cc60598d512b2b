import { Module } from '@nestjs/common';
import { IngestionModule } from './ingestion/ingestion.module.js';
import { PublicationModule } from './publication/publication.module.js';
import { ReportsModule } from './reports/reports.module.js';
import { SettingsModule } from './settings/settings.module.js';

/**
 * reporting-projection: events in (ingestion, settings), snapshots published, reports
 * answered. createReportingProjectionApp adds the InfrastructureModule.
 */
@Module({ imports: [IngestionModule, PublicationModule, ReportsModule, SettingsModule] })
export class ReportingProjectionModule {}
