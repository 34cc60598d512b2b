import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ReportingModule } from '../reporting/reporting.module.js';
import { DashboardReportingController } from './dashboard-reporting.controller.js';

/** GET /agent/dashboard/reporting and …/series: the owner's reporting, answered as the API-key routes answer (ReportingService). */
@Module({
  imports: [AuthModule, ReportingModule],
  controllers: [DashboardReportingController],
})
export class DashboardModule {}
