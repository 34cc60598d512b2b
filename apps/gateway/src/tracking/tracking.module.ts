import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { TrackingChecks } from './tracking-checks.service.js';
import { TrackingEventsRelay, TrackingOutbox } from './tracking-outbox.js';
import { trackingSecretsProvider } from './tracking-secrets.provider.js';
import { TrackingController } from './tracking.controller.js';
import { TrackingService } from './tracking.service.js';

/**
 * The tracking URLs of recommendations: GET /track/exposure and /track/click verify the signed
 * token and record the event when they may (expiry, platform status through the identity
 * cache, per-address limit and once-only check in Redis; the gateway's outbox and its relay when
 * JetStream does not acknowledge); TrackingService also signs the URLs
 * POST /agent/recommend answers, with the secrets resolved at start.
 */
@Module({
  imports: [AuthModule],
  controllers: [TrackingController],
  providers: [TrackingService, TrackingChecks, trackingSecretsProvider, TrackingOutbox, TrackingEventsRelay],
  exports: [TrackingService],
})
export class TrackingModule {}
