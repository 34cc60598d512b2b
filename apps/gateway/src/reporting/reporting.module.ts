import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DOWNSTREAM, downstreamClient } from '../http/downstream-services.js';
import { ReportingController } from './reporting.controller.js';

/** GET /agent/reporting: the platform's report, from reporting-projection over NATS, forwarded as its JSON bytes. */
@Module({
  imports: [AuthModule, downstreamClient(DOWNSTREAM.reporting, { timeoutMs: (env) => env.REPORTING_REQUEST_TIMEOUT_MS, rawResults: true })],
  controllers: [ReportingController],
})
export class ReportingModule {}
