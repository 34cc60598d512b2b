import { Module } from '@nestjs/common';
import { PublicationModule } from '../publication/publication.module.js';
import { ReportController } from './report.controller.js';
import { ReportService } from './report.service.js';

/** Answers report requests from the published snapshots. */
@Module({
  imports: [PublicationModule],
  controllers: [ReportController],
  providers: [ReportService],
})
export class ReportsModule {}
