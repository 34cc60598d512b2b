import { Inject, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { DASHBOARD_PREFIX, dashboardFilesPlugin } from './dashboard-files.plugin.js';

/**
 * The dashboard web app at /dashboard/ (DESIGN §7): the built files of apps/dashboard with
 * their caching, GET /dashboard/config.json from the OIDC_* settings, and the dashboard's
 * security headers. A Fastify plugin of its own (dashboard-files.plugin.ts), registered at
 * bootstrap, before the server listens: after Nest has set its error and not-found handlers,
 * because registering loads the routes registered so far, which keep the handlers they have then.
 */
@Module({})
export class DashboardAppModule implements OnApplicationBootstrap {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    await fastify.register(dashboardFilesPlugin(this.env, this.logger.child({ context: 'dashboard' })), { prefix: DASHBOARD_PREFIX });
  }
}
