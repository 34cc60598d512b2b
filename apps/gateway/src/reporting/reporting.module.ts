import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DOWNSTREAM, downstreamClient } from '../http/downstream-services.js';
import { ReportingController } from './reporting.controller.js';
import { ReportingService } from './reporting.service.js';
import { SeriesReplyCache } from './series-reply-cache.js';

/**
 * GET /agent/reporting and /agent/reporting/series (API key): reports and series from
 * reporting-projection over NATS, forwarded as its JSON bytes (or as CSV; ready series kept
 * briefly by SeriesReplyCache until the next publication). ReportingService is
 * exported for the owner's dashboard routes, which answer alike.
 */
@Module({
  imports: [AuthModule, downstreamClient(DOWNSTREAM.reporting, { timeoutMs: (env) => env.REPORTING_REQUEST_TIMEOUT_MS, rawResults: true })],
  controllers: [ReportingController],
  providers: [ReportingService, SeriesReplyCache],
  exports: [ReportingService],
})
export class ReportingModule {}
