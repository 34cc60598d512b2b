import { Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { natsServers } from '#libs/config';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import { ObservabilityModule, type Logger } from '#libs/observability';
import {
  InfrastructureShutdown,
  REDIS,
  dataSourceProvider,
  dependencyChecks,
  loggerProvider,
  natsProvider,
  natsSettings,
  redisProvider,
} from '#libs/bootstrap';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { IdTokenGuard } from './auth/id-token.guard.js';
import { IdTokenVerifier } from './auth/id-token.verifier.js';
import { IdentityCacheService } from './auth/identity-cache.service.js';
import { GatewayEnv } from './config/gateway.env.js';
import { OnboardingController } from './onboarding/onboarding.controller.js';
import { PayoutsController } from './payouts/payouts.controller.js';
import { PayoutsReplyCache } from './payouts/payouts-reply-cache.js';
import { ReportingController } from './reporting/reporting.controller.js';
import { RateLimitService } from './rate-limit/rate-limit.service.js';
import { RecommendationsController } from './recommendations/recommendations.controller.js';
import { TrackingController } from './tracking/tracking.controller.js';
import { TrackingService } from './tracking/tracking.service.js';

/** The gateway: the only public HTTP surface; owns the identity schema (platforms, API keys). */
@Module({})
export class GatewayModule {
  static forRoot(env: GatewayEnv, logger: Logger): DynamicModule {
    return {
      module: GatewayModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot([NatsClient, DataSource, REDIS], (nats: NatsClient, ds: DataSource, redis: Redis) =>
          dependencyChecks(nats, ds, redis),
        ),
      ],
      controllers: [ReportingController, OnboardingController, PayoutsController, RecommendationsController, TrackingController],
      providers: [
        { provide: GatewayEnv, useValue: env },
        loggerProvider(logger),
        natsProvider(natsServers(env.NATS_URL), 'gateway', natsSettings(env)),
        dataSourceProvider(() => createIdentityDataSource(env.DATABASE_URL, env.DATABASE_POOL_SIZE, 'gateway')),
        redisProvider(env.REDIS_URL, 'gateway'),
        { provide: IdentityRepository, inject: [DataSource], useFactory: (ds: DataSource) => new IdentityRepository(ds) },
        IdentityCacheService,
        ApiKeyGuard,
        IdTokenVerifier,
        IdTokenGuard,
        RateLimitService,
        PayoutsReplyCache,
        TrackingService,
        InfrastructureShutdown,
      ],
      exports: [GatewayEnv, NatsClient, DataSource, REDIS],
    };
  }
}
