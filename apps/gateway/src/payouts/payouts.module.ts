import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DOWNSTREAM, downstreamClient } from '../http/downstream-services.js';
import { PayoutsReplyCache } from './payouts-reply-cache.js';
import { PayoutsController } from './payouts.controller.js';
import { PayoutsService } from './payouts.service.js';

/**
 * GET /agent-payouts/me/*: payout data of the signed-in platform from payouts-read, whose JSON
 * replies are forwarded as bytes (rawResults) and kept in the gateway's reply cache.
 */
@Module({
  imports: [AuthModule, downstreamClient(DOWNSTREAM.payoutsRead, { timeoutMs: (env) => env.PAYOUTS_REQUEST_TIMEOUT_MS, rawResults: true })],
  controllers: [PayoutsController],
  providers: [PayoutsService, PayoutsReplyCache],
})
export class PayoutsModule {}
