import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '#libs/observability';
import { InfrastructureModule } from '#libs/bootstrap';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingDataSource, REPORTING_SCHEMA } from './database/reporting.data-source.js';
import { IngestionModule } from './ingestion/ingestion.module.js';
import { PublicationModule } from './publication/publication.module.js';
import { ReportsModule } from './reports/reports.module.js';
import { SettingsModule } from './settings/settings.module.js';

/** reporting-projection: events in (ingestion, settings), snapshots published, reports answered. */
@Module({})
export class ReportingProjectionModule {
  static forRoot(env: ReportingProjectionEnv, logger: Logger): DynamicModule {
    return {
      module: ReportingProjectionModule,
      imports: [
        InfrastructureModule.forRoot({
          service: 'reporting-projection',
          env,
          logger,
          database: { schema: REPORTING_SCHEMA, create: (e) => createReportingDataSource(e.DATABASE_URL, e.DATABASE_POOL_SIZE) },
        }),
        IngestionModule,
        PublicationModule,
        ReportsModule,
        SettingsModule,
      ],
    };
  }
}
