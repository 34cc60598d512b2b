import { Module } from '@nestjs/common';
import { TrackingController } from './tracking.controller.js';
import { TrackingService } from './tracking.service.js';

/**
 * The tracking URLs of recommendations: GET /track/exposure and /track/click verify the signed
 * token and publish the event; TrackingService also signs the URLs POST /agent/recommend answers.
 */
@Module({
  controllers: [TrackingController],
  providers: [TrackingService],
  exports: [TrackingService],
})
export class TrackingModule {}
