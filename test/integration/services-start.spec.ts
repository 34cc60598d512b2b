import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { loadEnv } from '#libs/config';
import { PayoutsReadEnv } from '../../apps/payouts-read/src/config/payouts-read.env.js';
import { createPayoutsReadApp } from '../../apps/payouts-read/src/payouts-read.app.js';
import { TimezoneSettingsEnv } from '../../apps/timezone-settings/src/config/timezone-settings.env.js';
import { createTimezoneSettingsApp } from '../../apps/timezone-settings/src/timezone-settings.app.js';
import { REDIS_URL, capturingLogger, newTestDatabase, startNats, testLogger, waitFor, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * The two skeleton services start against real NATS, PostgreSQL and Redis, migrate their own
 * schema idempotently, answer health and metrics, and stop cleanly (DESIGN §2, §5).
 */
interface ServiceCase {
  name: string;
  schema: string;
  tables: string[];
  start(overrides: Record<string, string>): Promise<NestFastifyApplication>;
}

const SERVICES: ServiceCase[] = [
  {
    name: 'payouts-read',
    schema: 'payouts',
    tables: ['balance', 'readiness', 'statement'],
    start: (overrides) =>
      createPayoutsReadApp(loadEnv(PayoutsReadEnv, { PAYOUTS_HTTP_PORT: '0', HOST: '127.0.0.1', ...overrides }), testLogger('payouts-read')),
  },
  {
    name: 'timezone-settings',
    schema: 'timezone_settings',
    tables: ['outbox', 'platform_timezone'],
    start: (overrides) =>
      createTimezoneSettingsApp(
        loadEnv(TimezoneSettingsEnv, { TIMEZONE_HTTP_PORT: '0', HOST: '127.0.0.1', ...overrides }),
        testLogger('timezone-settings'),
      ),
  },
];

async function listen(app: NestFastifyApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

async function tablesOf(databaseUrl: string, schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    return rows.map((r) => r.table_name);
  } finally {
    await client.end();
  }
}

let nats: TestNats;

beforeAll(async () => {
  nats = await startNats();
});

afterAll(async () => {
  await nats?.stop();
});

describe.each(SERVICES)('$name', (service) => {
  let db: TestDatabase;
  let env: Record<string, string>;
  const apps: NestFastifyApplication[] = [];

  beforeAll(() => {
    db = newTestDatabase();
    env = { NATS_URL: nats.url, DATABASE_URL: db.url, REDIS_URL };
  });

  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
    await db?.drop();
  });

  it('answers liveness, readiness and metrics, owns its tables, migrates idempotently and drains', async () => {
    const first = await service.start(env);
    apps.push(first);
    const base = await listen(first);

    const live = await fetch(`${base}/health/live`);
    expect(live.status).toBe(200);

    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    const readiness = (await ready.json()) as { status: string; info: Record<string, { status: string }> };
    expect(readiness.status).toBe('ok');
    expect(readiness.info).toEqual({ nats: { status: 'up' }, postgres: { status: 'up' }, redis: { status: 'up' } });

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('process_cpu_user_seconds_total');

    // The schema's own tables exist, beside the migrations table of this schema.
    const tables = await tablesOf(db.url, service.schema);
    expect(tables).toEqual(expect.arrayContaining([...service.tables, 'migrations']));
    expect(tables).toHaveLength(service.tables.length + 1);

    // The streams of DESIGN §4 were created at start.
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await expect(jsm.streams.info('EVENTS')).resolves.toBeDefined();
      await expect(jsm.streams.info('DEAD_LETTERS')).resolves.toBeDefined();
      await expect(jsm.streams.info('SETTINGS')).resolves.toBeDefined();
    } finally {
      await nc.close();
    }

    // A second replica against the same database and NATS starts: migrations and streams
    // are idempotent, and the migration ran once.
    const second = await service.start(env);
    apps.push(second);
    const secondBase = await listen(second);
    expect((await fetch(`${secondBase}/health/ready`)).status).toBe(200);
    expect(await tablesOf(db.url, service.schema)).toEqual(tables);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT name FROM "${service.schema}".migrations`);
      // Each migration ran exactly once (a schema may have several).
      const names = rows.map((r: { name: string }) => r.name);
      expect(names.length).toBeGreaterThanOrEqual(1);
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await client.end();
    }

    // Closing drains NATS and closes the pool and Redis, within bounded time.
    const closed = (app: NestFastifyApplication) =>
      Promise.race([
        app.close().then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('timed out'), 10000).unref()),
      ]);
    await expect(closed(second)).resolves.toBe('closed');
    await expect(closed(first)).resolves.toBe('closed');
    apps.splice(0);
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
  });
});

/**
 * Issue 16, item 2: a service started alone (Kubernetes, or before its servers) waits for NATS
 * with backoff, one log line per failed attempt and no stack trace, and starts once NATS answers.
 */
describe('a service started before NATS', () => {
  let db: TestDatabase;
  let late: TestNats;
  let app: NestFastifyApplication | undefined;

  beforeAll(async () => {
    db = newTestDatabase();
    late = await startNats();
    await late.kill('SIGTERM'); // its port and store are kept: nothing listens there now
  });

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    await late?.stop().catch(() => undefined);
    await db?.drop();
  });

  it('retries with backoff, one line per attempt, and starts once NATS answers', async () => {
    const { logger, lines } = capturingLogger('timezone-settings', 'info');
    const starting = createTimezoneSettingsApp(
      loadEnv(TimezoneSettingsEnv, { TIMEZONE_HTTP_PORT: '0', HOST: '127.0.0.1', NATS_URL: late.url, DATABASE_URL: db.url, REDIS_URL }),
      logger,
    );
    const retries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.server === 'NATS' && entry.retryInMs !== undefined);
    await waitFor(async () => (retries().length >= 3 ? true : undefined), { timeoutMs: 15000, what: 'three failed attempts logged' });

    const failed = retries();
    expect(failed.slice(0, 3).map((entry) => entry.attempt)).toEqual([1, 2, 3]);
    for (const entry of failed) {
      expect(entry.msg).toMatch(new RegExp(`^NATS not reachable at nats://127\\.0\\.0\\.1:${late.port} \\(.+\\); attempt \\d+ failed, retrying in \\d+\\.\\d s$`));
      expect(JSON.stringify(entry)).not.toMatch(/\n\s+at /); // no stack trace
    }
    // Backoff: the waits grow (0.5 s doubling, jittered) rather than repeating at one pace.
    const waits = failed.slice(0, 3).map((entry) => entry.retryInMs as number);
    expect(waits[2]).toBeGreaterThan(waits[0]);

    await late.start();
    app = await starting;
    const base = await listen(app);
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    expect(lines.some((line) => /"msg":"NATS reached at /.test(line))).toBe(true);
  });
});
