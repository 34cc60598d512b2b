import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnv } from '#libs/config';
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

/** Starts reporting-projection in this process, as main.ts does, on a free port. */
export async function startReportingProjection(
  settings: { natsUrl: string; databaseUrl: string } & Record<string, string | number>,
): Promise<ServiceUnderTest<ReportingProjectionEnv>> {
  const { natsUrl, databaseUrl, ...rest } = settings;
  const env = loadEnv(ReportingProjectionEnv, {
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REPORTING_HTTP_PORT: '0',
    HOST: '127.0.0.1',
    ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, String(v)])),
  });
  const app = await createReportingProjectionApp(env, testLogger('reporting-projection'));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, env, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** Starts payouts-read in this process, as main.ts does, on a free port. */
export async function startPayoutsRead(
  settings: { natsUrl: string; databaseUrl: string } & Record<string, string | number>,
): Promise<ServiceUnderTest<PayoutsReadEnv>> {
  const { natsUrl, databaseUrl, ...rest } = settings;
  const env = loadEnv(PayoutsReadEnv, {
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    PAYOUTS_HTTP_PORT: '0',
    HOST: '127.0.0.1',
    ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, String(v)])),
  });
  const app = await createPayoutsReadApp(env, testLogger('payouts-read'));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, env, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** Starts the recommendations service in this process, as main.ts does, on a free port. */
export async function startRecommendations(
  settings: { natsUrl: string; databaseUrl: string } & Record<string, string | number>,
): Promise<ServiceUnderTest<RecommendationsEnv>> {
  const { natsUrl, databaseUrl, ...rest } = settings;
  const env = loadEnv(RecommendationsEnv, {
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    RECOMMENDATIONS_HTTP_PORT: '0',
    HOST: '127.0.0.1',
    ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, String(v)])),
  });
  const app = await createRecommendationsApp(env, testLogger('recommendations'));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, env, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}
