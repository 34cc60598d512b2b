import { Module, type DynamicModule } from '@nestjs/common';
import { InfrastructureModule } from '#libs/bootstrap';
import { createIdentityDataSource } from '#libs/identity';
import type { Logger } from '#libs/observability';
import { AuthModule } from './auth/auth.module.js';
import { GatewayEnv } from './config/gateway.env.js';
import { DashboardAppModule } from './dashboard-app/dashboard-app.module.js';
import { DashboardModule } from './dashboard/dashboard.module.js';
import { DocsModule } from './docs/docs.module.js';
import { KeysModule } from './keys/keys.module.js';
import { OnboardingModule } from './onboarding/onboarding.module.js';
import { PayoutsModule } from './payouts/payouts.module.js';
import { RecommendationsModule } from './recommendations/recommendations.module.js';
import { ReportingModule } from './reporting/reporting.module.js';
import { TrackingModule } from './tracking/tracking.module.js';

/**
 * The gateway: the only public HTTP surface; owns the identity schema (platforms, API keys).
 * Its infrastructure (env, logger, NATS, the identity DataSource, Redis, health, metrics) is
 * the one global module; each feature is a module of its own.
 */
@Module({})
export class GatewayModule {
  static forRoot(env: GatewayEnv, logger: Logger): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        InfrastructureModule.forRoot({
          service: 'gateway',
          env,
          logger,
          database: { create: (e) => createIdentityDataSource(e.DATABASE_URL, e.DATABASE_POOL_SIZE, 'gateway') },
        }),
        AuthModule,
        ReportingModule,
        PayoutsModule,
        OnboardingModule,
        RecommendationsModule,
        TrackingModule,
        KeysModule,
        DashboardModule,
        DashboardAppModule,
        DocsModule,
      ],
    };
  }
}
