import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnv } from '#libs/config';
import type { Logger } from '#libs/observability';
import { PayoutsReadEnv } from '../../apps/payouts-read/src/config/payouts-read.env.js';
import { createPayoutsReadApp } from '../../apps/payouts-read/src/payouts-read.app.js';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { createReportingProjectionApp } from '../../apps/reporting-projection/src/reporting-projection.app.js';
import { RecommendationsEnv } from '../../apps/recommendations/src/config/recommendations.env.js';
import { createRecommendationsApp } from '../../apps/recommendations/src/recommendations.app.js';
import { testLogger } from './logger.js';
import { REDIS_URL } from './servers.js';

export interface ServiceUnderTest<Env> {
  app: NestFastifyApplication;
  env: Env;
  url: string;
  close(): Promise<void>;
}

export type ServiceSettings = { natsUrl: string; databaseUrl: string } & Record<string, string | number>;

/** Starts a service in this process, as its main.ts does, on a free port (`portVariable` 0). */
export async function startInProcess<Env extends object>(
  name: string,
  envClass: new () => Env,
  portVariable: string,
  create: (env: Env, logger: Logger) => Promise<NestFastifyApplication>,
  settings: ServiceSettings,
): Promise<ServiceUnderTest<Env>> {
  const { natsUrl, databaseUrl, ...rest } = settings;
  const env = loadEnv(envClass, {
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    [portVariable]: '0',
    HOST: '127.0.0.1',
    ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, String(v)])),
  });
  const app = await create(env, testLogger(name));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, env, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** Starts reporting-projection in this process, as main.ts does, on a free port. */
export function startReportingProjection(settings: ServiceSettings): Promise<ServiceUnderTest<ReportingProjectionEnv>> {
  return startInProcess('reporting-projection', ReportingProjectionEnv, 'REPORTING_HTTP_PORT', createReportingProjectionApp, settings);
}

/** Starts payouts-read in this process, as main.ts does, on a free port. */
export function startPayoutsRead(settings: ServiceSettings): Promise<ServiceUnderTest<PayoutsReadEnv>> {
  return startInProcess('payouts-read', PayoutsReadEnv, 'PAYOUTS_HTTP_PORT', createPayoutsReadApp, settings);
}

/** Starts the recommendations service in this process, as main.ts does, on a free port. */
export function startRecommendations(settings: ServiceSettings): Promise<ServiceUnderTest<RecommendationsEnv>> {
  return startInProcess('recommendations', RecommendationsEnv, 'RECOMMENDATIONS_HTTP_PORT', createRecommendationsApp, settings);
}
