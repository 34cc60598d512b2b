import { Module } from '@nestjs/common';
import { PublicationModule } from '../publication/publication.module.js';
import { PublishedCaches } from './published-cache.js';
import { ReportController } from './report.controller.js';
import { ReportService } from './report.service.js';
import { SeriesService } from './series.service.js';

/** Answers report and series requests from the published snapshots. */
@Module({
  imports: [PublicationModule],
  controllers: [ReportController],
  providers: [PublishedCaches, ReportService, SeriesService],
})
export class ReportsModule {}
