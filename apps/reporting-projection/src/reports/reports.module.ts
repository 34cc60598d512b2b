import { Module } from '@nestjs/common';
import { PublicationModule } from '../publication/publication.module.js';
import { BreakdownService } from './breakdown.service.js';
import { PublishedCaches } from './published-cache.js';
import { ReportController } from './report.controller.js';
import { ReportService } from './report.service.js';

/** Answers report, series and breakdown requests from the published snapshots. */
@Module({
  imports: [PublicationModule],
  controllers: [ReportController],
  providers: [PublishedCaches, ReportService, BreakdownService],
})
export class ReportsModule {}
