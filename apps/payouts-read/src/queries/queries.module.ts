import { Module } from '@nestjs/common';
import { PayoutReplyCache } from './payout-reply-cache.js';
import { PayoutsController } from './payouts.controller.js';
import { PayoutsQueryService } from './payouts-query.service.js';
import { PayoutsRepository } from './payouts.repository.js';

/** Answers the `payouts.v1.*` requests from the read model, through the reply cache. */
@Module({
  controllers: [PayoutsController],
  providers: [PayoutsRepository, PayoutsQueryService, PayoutReplyCache],
  exports: [PayoutReplyCache],
})
export class QueriesModule {}
