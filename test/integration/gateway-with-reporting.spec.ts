import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';
import { loadEnv } from '#libs/config';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { createGatewayApp } from '../../apps/gateway/src/gateway.app.js';
import {
  REDIS_URL,
  newTestDatabase,
  startNats,
  startReportingProjection,
  testLogger,
  waitFor,
  type TestDatabase,
  type TestNats,
} from '../support/index.js';

/** The gateway in front of the real reporting-projection: 202 while preparing, then 200. */
let nats: TestNats;
let db: TestDatabase;
let gateway: NestFastifyApplication;
let reporting: Awaited<ReturnType<typeof startReportingProjection>>;
let dataSource: DataSource;
let base: string;

beforeAll(async () => {
  nats = await startNats();
  db = newTestDatabase();
  reporting = await startReportingProjection({ natsUrl: nats.url, databaseUrl: db.url, REPORTING_PUBLISH_INTERVAL_MS: 200 });
  const env = loadEnv(GatewayEnv, { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL, LOG_LEVEL: 'warn' });
  gateway = await createGatewayApp(env, testLogger('gateway'));
  await gateway.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(gateway.getHttpServer().address() as { port: number }).port}`;
  dataSource = createIdentityDataSource(db.url, 2, 'gateway-test');
  await dataSource.initialize();
});

afterAll(async () => {
  await gateway?.close();
  await reporting?.close();
  if (dataSource?.isInitialized) await dataSource.destroy();
  await nats?.stop();
  await db?.drop();
});

it('answers 202 with Retry-After: 60 for a new scope, then the report of the key traffic', async () => {
  const identity = new IdentityRepository(dataSource);
  await identity.createPlatform('agent_full');
  const { api_key } = await identity.createKey('agent_full', 'test');
  const ask = () => fetch(`${base}/agent/reporting?time_range=7d`, { headers: { authorization: `Bearer ${api_key}` } });

  const first = await ask();
  expect(first.status).toBe(202);
  expect(first.headers.get('retry-after')).toBe('60');
  expect(await first.json()).toMatchObject({ status: 'preparing', agent_id: 'agent_full', time_range: '7d', is_test: true });

  const report = await waitFor(
    async () => {
      const response = await ask();
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    },
    { timeoutMs: 20000, intervalMs: 200, what: 'a ready report' },
  );
  expect(report).toMatchObject({ agent_id: 'agent_full', time_range: '7d', is_test: true, exposures: 0, report_schema_version: 1 });
});
