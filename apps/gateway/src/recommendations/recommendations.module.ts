import { Module } from '@nestjs/common';
import { RECOMMEND_MAX_LATENCY_BUDGET_MS } from '#libs/contracts';
import { AuthModule } from '../auth/auth.module.js';
import { DOWNSTREAM, downstreamClient } from '../http/downstream-services.js';
import { TrackingModule } from '../tracking/tracking.module.js';
import { RecommendationsController } from './recommendations.controller.js';
import { RECOMMEND_TIMEOUT_MARGIN_MS, RecommendationsService } from './recommendations.service.js';

/**
 * POST /agent/recommend: recommendations from the recommendations service, with the tracking
 * URLs signed by the tracking feature. Each request waits its own latency budget plus a margin;
 * the client's timeout only covers the largest budget.
 */
@Module({
  imports: [
    AuthModule,
    TrackingModule,
    downstreamClient(DOWNSTREAM.recommendations, { timeoutMs: () => RECOMMEND_MAX_LATENCY_BUDGET_MS + RECOMMEND_TIMEOUT_MARGIN_MS }),
  ],
  controllers: [RecommendationsController],
  providers: [RecommendationsService],
})
export class RecommendationsModule {}
