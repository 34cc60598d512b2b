import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DOWNSTREAM, downstreamClient } from '../http/downstream-services.js';
import { OnboardingController } from './onboarding.controller.js';
import { OnboardingService } from './onboarding.service.js';

/** PATCH /agent/update-onboarding: the owner sets the reporting timezone, kept by timezone-settings. */
@Module({
  imports: [AuthModule, downstreamClient(DOWNSTREAM.timezoneSettings, { timeoutMs: (env) => env.TIMEZONE_REQUEST_TIMEOUT_MS })],
  controllers: [OnboardingController],
  providers: [OnboardingService],
})
export class OnboardingModule {}
