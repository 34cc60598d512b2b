import { Controller, Get, Header, Inject, Module, type DynamicModule } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { metricsRegistry } from './metrics.js';

/** A dependency the service needs to do its work; `probe` rejects when it does not answer. */
export interface DependencyCheck {
  name: string;
  probe: () => Promise<unknown>;
}

export const DEPENDENCY_CHECKS = Symbol('DEPENDENCY_CHECKS');
const PROBE_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Health and metrics. Not part of the API's documentation: the gateway leaves this controller out
 * of its OpenAPI document (apps/gateway/src/docs/api-docs.ts). Nothing here imports
 * @nestjs/swagger, and @HealthCheck is told not to document itself (otherwise it loads
 * @nestjs/swagger when installed): a service that has no API documentation, such as
 * reporting-projection, keeps about 4 MB of heap (its module text and code) free.
 */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(DEPENDENCY_CHECKS) private readonly checks: DependencyCheck[],
  ) {}

  /** Liveness: the process runs its event loop. Dependencies are not checked here on purpose. */
  @Get('health/live')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  live() {
    return this.health.check([]);
  }

  /** Readiness: NATS, PostgreSQL and Redis answer (DESIGN §5). */
  @Get('health/ready')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  ready() {
    return this.health.check(
      this.checks.map((dependency) => async () => {
        const indicator = this.indicators.check(dependency.name);
        try {
          await withTimeout(dependency.probe(), PROBE_TIMEOUT_MS);
          return indicator.up();
        } catch (error) {
          return indicator.down({ message: (error as Error).message });
        }
      }),
    );
  }

  @Get('metrics')
  @Header('Content-Type', metricsRegistry.contentType)
  metrics() {
    return metricsRegistry.metrics();
  }
}

@Module({})
export class ObservabilityModule {
  /** `checksProvider` is a factory provider returning DependencyCheck[]. */
  static forRoot(inject: unknown[], useFactory: (...deps: never[]) => DependencyCheck[]): DynamicModule {
    return {
      module: ObservabilityModule,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController],
      providers: [{ provide: DEPENDENCY_CHECKS, inject: inject as never[], useFactory }],
    };
  }
}
