import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import {
  POSTGRES_ADMIN_URL,
  connectProducer,
  freePort,
  newTestDatabase,
  payoutStatementEvent,
  startPrivateRedis,
  startSecuredNats,
  waitFor,
  type PrivateRedis,
  type Producer,
  type SecuredNats,
  type TestDatabase,
} from '../support/index.js';
import { TEST_AUDIENCE, TEST_ISSUER, generateTestKey, signIdToken, writeJwksFile, type TestKey } from '../support/oidc.js';

/**
 * Issue 12, items 1–3, with every service as its own process (dist/apps/<service>/src/main.js,
 * as Kubernetes runs them): NATS with deploy/nats/nats-server.conf, each service and the ops CLI
 * as its own NATS user; PostgreSQL with deploy/postgres/least-privilege.sql, each service with
 * its own role; Redis with an ACL user and no default user. One flow does all the work of the
 * system (events in, a report out through the gateway, payouts read, a timezone set, a
 * recommendation and its tracking links, ops commands, dead letters), and the NATS server's log
 * shows that nothing was refused on the way but the one re-drive that DESIGN §8 forbids.
 */

const ROOT = process.cwd();
const CATALOG = join(ROOT, 'catalog', 'sample-catalog.json');
const AGENT = 'agent_secured';
const OWNER = 'uid_secured_owner';
const SERVICES = ['gateway', 'reporting-projection', 'payouts-read', 'timezone-settings', 'recommendations'] as const;
type Service = (typeof SERVICES)[number];
const PORT_VARIABLE: Record<Service, string> = {
  gateway: 'PORT',
  'reporting-projection': 'REPORTING_HTTP_PORT',
  'payouts-read': 'PAYOUTS_HTTP_PORT',
  'timezone-settings': 'TIMEZONE_HTTP_PORT',
  recommendations: 'RECOMMENDATIONS_HTTP_PORT',
};
/** deploy/postgres/least-privilege.sql: the role of each service. */
const ROLE: Record<Service, string> = {
  gateway: 'gateway',
  'reporting-projection': 'reporting_projection',
  'payouts-read': 'payouts_read',
  'timezone-settings': 'timezone_settings',
  recommendations: 'recommendations',
};
/** The services' Redis ACL user, as docker-compose.yml and the Kubernetes overlays define it. */
const REDIS_ACL = ['~weave:*', '&weave:*', '+@all', '-@dangerous', '+info'];

interface Running {
  child: ChildProcess;
  output: () => string;
  port: number;
  exited: Promise<number | null>;
}

let nats: SecuredNats;
let redis: PrivateRedis;
let db: TestDatabase;
let key: TestKey;
let jwksFile: string;
let producer: Producer;
const redisPassword = `r${randomBytes(12).toString('hex')}`;
const adminPassword = `a${randomBytes(12).toString('hex')}`;
const running = new Map<Service, Running>();
const strays: Running[] = [];

function roleUrl(role: string): string {
  const url = new URL(db.url);
  url.username = role;
  return url.toString();
}

const redisUrl = (user = 'weave', password = redisPassword) => `redis://${user}:${password}@127.0.0.1:${redis.port}`;

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  // Only what a service needs: nothing of this machine's NATS_*/DATABASE_URL leaks in.
  for (const name of ['PATH', 'HOME', 'TZ', 'NODE_OPTIONS']) if (process.env[name]) env[name] = process.env[name]!;
  return { ...env, NATS_URL: nats.url, HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '5000' };
}

async function spawnService(service: Service, env: Record<string, string>): Promise<Running> {
  const main = join(ROOT, 'dist', 'apps', service, 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first (npm test does)`);
  const port = await freePort();
  const child = spawn(process.execPath, [main], { cwd: ROOT, env: { ...env, [PORT_VARIABLE[service]]: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, port, exited };
}

function serviceEnv(service: Service): Record<string, string> {
  return {
    ...baseEnv(),
    ...nats.identityEnv(service),
    DATABASE_URL: roleUrl(ROLE[service]),
    REDIS_URL: redisUrl(),
    ...(service === 'gateway'
      ? { OIDC_ISSUER: TEST_ISSUER, OIDC_AUDIENCE: TEST_AUDIENCE, OIDC_JWKS_URL: jwksFile, TRACKING_SIGNING_SECRET: randomBytes(24).toString('hex') }
      : {}),
    ...(service === 'reporting-projection' ? { REPORTING_PUBLISH_INTERVAL_MS: '500' } : {}),
  };
}

async function ready(port: number): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(3000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined;
  }
}

async function stop(run: Running): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 10000);
  await run.exited;
  clearTimeout(timer);
}

/** `npm run ops -- …` as a process, with the ops identity the way an operator sets it. */
async function ops(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'apps', 'ops', 'src', 'main.js'), ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), NATS_PASSWORD_OPS: nats.passwords.ops, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

async function opsJson(args: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  const result = await ops(args, env);
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>, url = db.url): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const base = () => `http://127.0.0.1:${running.get('gateway')!.port}`;

beforeAll(async () => {
  nats = await startSecuredNats();
  redis = await startPrivateRedis({
    args: ['--user', 'default', 'off', '--user', 'weave', 'on', `>${redisPassword}`, ...REDIS_ACL, '--user', 'admin', 'on', `>${adminPassword}`, '~*', '&*', '+@all'],
    probe: { user: 'admin', pass: adminPassword },
  });
  // A fresh database made by the administrator, then the roles and schemas of least-privilege.sql.
  db = newTestDatabase();
  await admin((c) => c.query(`CREATE DATABASE "${db.name}"`), POSTGRES_ADMIN_URL);
  const sql = readFileSync(join(ROOT, 'deploy', 'postgres', 'least-privilege.sql'), 'utf8');
  // Roles are global to the PostgreSQL cluster; test files running at once may create them together.
  await waitFor(() => admin((c) => c.query(sql)).then(() => true), { timeoutMs: 10000, what: 'least-privilege.sql' });
  key = await generateTestKey('RS256');
  jwksFile = await writeJwksFile([key]);

  await Promise.all(
    SERVICES.map(async (service) => {
      const run = await spawnService(service, serviceEnv(service));
      running.set(service, run);
      await waitFor(async () => (await ready(run.port))?.status === 200, { timeoutMs: 60000, intervalMs: 250, what: `${service} ready` }).catch((error: Error) => {
        throw new Error(`${error.message}\n--- ${service} ---\n${run.output().slice(-3000)}`);
      });
    }),
  );
  producer = await connectProducer(nats.url, nats.credentials('producer'));
}, 180000);

afterAll(async () => {
  await producer?.close().catch(() => undefined);
  for (const run of [...running.values(), ...strays]) await stop(run);
  await nats?.stop();
  await rm(nats?.logFile ?? '', { force: true });
  await redis?.destroy();
  await db?.drop();
  // The roles stay when another test's database still uses them.
  for (const role of Object.values(ROLE)) await admin((c) => c.query(`DROP ROLE IF EXISTS ${role}`), POSTGRES_ADMIN_URL).catch(() => undefined);
  if (jwksFile) await rm(jwksFile, { force: true });
});

it('runs each service as its own NATS user and PostgreSQL role, with Redis through the ACL user', async () => {
  const connz = (await (await fetch(`${nats.monitorUrl}/connz?auth=true`)).json()) as { connections: { name?: string; authorized_user?: string }[] };
  const users = new Map(connz.connections.map((c) => [c.name, c.authorized_user]));
  for (const service of SERVICES) expect({ service, user: users.get(service) }).toEqual({ service, user: service });

  // A pool closes a connection idle for 10 s (pg's default), and a service with nothing to do
  // may have none open: each one's readiness check (a statement on its pool) comes just before.
  for (const service of SERVICES) expect({ service, ready: (await ready(running.get(service)!.port))?.status }).toEqual({ service, ready: 200 });
  const sessions = await admin((c) => c.query<{ application_name: string; usename: string }>('SELECT application_name, usename FROM pg_stat_activity WHERE datname = $1', [db.name]));
  for (const service of SERVICES) {
    const roles = new Set(sessions.rows.filter((r) => r.application_name === service).map((r) => r.usename));
    expect({ service, roles: [...roles] }).toEqual({ service, roles: [ROLE[service]] });
  }
  // Each schema belongs to its service's role, and so do the tables its migrations made.
  const owners = await admin((c) =>
    c.query<{ schema: string; owner: string; tables: string }>(
      `SELECT n.nspname AS schema, pg_get_userbyid(n.nspowner) AS owner,
              (SELECT string_agg(DISTINCT pg_get_userbyid(t.relowner), ',') FROM pg_class t WHERE t.relnamespace = n.oid AND t.relkind = 'r') AS tables
       FROM pg_namespace n WHERE n.nspname IN ('identity', 'reporting', 'payouts', 'timezone_settings', 'recommendations') ORDER BY 1`,
    ),
  );
  expect(owners.rows).toEqual([
    { schema: 'identity', owner: 'gateway', tables: 'gateway' },
    { schema: 'payouts', owner: 'payouts_read', tables: 'payouts_read' },
    { schema: 'recommendations', owner: 'recommendations', tables: 'recommendations' },
    { schema: 'reporting', owner: 'reporting_projection', tables: 'reporting_projection' },
    { schema: 'timezone_settings', owner: 'timezone_settings', tables: 'timezone_settings' },
  ]);
});

it('does all the work of the system under those identities', async () => {
  // ops: platform and key (as the gateway's role, which owns identity), the catalog (as the
  // recommendations role, which owns it); the identity change is announced as NATS user ops.
  const asGateway = { DATABASE_URL: roleUrl('gateway') };
  expect(await opsJson(['platform', 'create', '--agent-id', AGENT, '--owner-uid', OWNER], asGateway)).toMatchObject({ agent_id: AGENT, status: 'active' });
  const apiKey = String((await opsJson(['key', 'create', '--agent-id', AGENT, '--mode', 'live'], asGateway)).api_key);
  expect(await opsJson(['ads', 'import', '--file', CATALOG], { DATABASE_URL: roleUrl('recommendations') })).toMatchObject({ imported: expect.any(Number) });
  const idToken = await signIdToken(key, { sub: OWNER, role: 'agent' });
  const authorized = { authorization: `Bearer ${apiKey}` };

  // Internal producers: a recommendation's lifecycle, accounting, payouts.
  const now = new Date();
  const created = new Date(now.getTime() - 5 * 60_000).toISOString();
  const lifecycle = (kind: string, n: number) => ({
    subject: `events.recommendation.${kind}`,
    id: `evt_sec_${kind}_${n}`,
    payload: { event_id: `evt_sec_${kind}_${n}`, recommendation_id: `rec_sec_${n}`, agent_id: AGENT, traffic: 'live', recommendation_created_at: created, occurred_at: created, billable: true },
  });
  for (const event of [lifecycle('generated', 1), lifecycle('shown', 1), lifecycle('clicked', 1), lifecycle('generated', 2), lifecycle('shown', 2)]) await producer.publish(event);
  await producer.publish({
    subject: 'events.accounting.entry',
    id: 'acc_sec_1',
    payload: { entry_id: 'acc_sec_1', agent_id: AGENT, traffic: 'live', recommendation_id: 'rec_sec_1', amount_micros: 1_250_000, currency: 'USD', recorded_at: created },
  });
  await producer.publish({ subject: 'events.accounting.reconciled', id: 'rcn_sec_1', payload: { event_id: 'rcn_sec_1', traffic: 'live', reconciled_through: now.toISOString() } });
  const balance = { agent_id: AGENT, currency: 'USD', pending_micros: 1_250_000, available_micros: 0, locked_micros: 0, paid_out_micros: 0, updated_at: now.toISOString(), version: 1 };
  await producer.publish({ subject: 'events.payouts.balance', id: 'pay_sec_balance_1', payload: balance });
  await producer.publish({ subject: 'events.payouts.statement', id: 'pay_sec_statement_1', payload: payoutStatementEvent(AGENT, 3) });

  // The report, through the gateway (reporting.v1.report.get, answered by reporting-projection).
  const report = async () => {
    const response = await fetch(`${base()}/agent/reporting?time_range=all`, { headers: authorized });
    return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
  };
  expect(
    await waitFor(async () => {
      const r = await report();
      return r && r.exposures === 2 && r.clicks === 1 && r.earnings_micros === 1_250_000 ? r : undefined;
    }, { timeoutMs: 60000, intervalMs: 500, what: 'the report of the produced events' }),
  ).toMatchObject({ agent_id: AGENT, is_test: false, exposures: 2, clicks: 1, earnings_micros: 1_250_000 });

  // Payouts read (payouts.v1.*, answered by payouts-read) with the owner's ID token.
  const payouts = (path: string) => fetch(`${base()}/agent-payouts/me/${path}`, { headers: { authorization: `Bearer ${idToken}` } });
  const balances = await waitFor(async () => {
    const response = await payouts('balance');
    const body = response.status === 200 ? ((await response.json()) as { items?: unknown[] } & Record<string, unknown>) : undefined;
    return body && JSON.stringify(body).includes('"pending_micros":1250000') ? body : undefined;
  }, { timeoutMs: 30000, what: 'the payout balance' });
  expect(JSON.stringify(balances)).toContain(AGENT);
  const statements = (await (await payouts('statements')).json()) as { items: { statement_id: string }[]; total: number };
  expect(statements).toMatchObject({ total: 1, items: [{ statement_id: `st_${AGENT}_03` }] });

  // The reporting timezone: timezone.v1.set, then settings.timezone.changed → reporting-projection.
  const patched = await fetch(`${base()}/agent/update-onboarding`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${idToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reporting_timezone: 'Asia/Kathmandu' }),
  });
  expect(patched.status).toBe(200);
  await waitFor(async () => (await report())?.timezone === 'Asia/Kathmandu', { timeoutMs: 30000, intervalMs: 500, what: 'the new timezone in the report' });

  // A recommendation (recommendations.v1.recommend; `generated` from the recommendations user)
  // and its tracking links (`shown` and `clicked` from the gateway user).
  const recommended = await fetch(`${base()}/agent/recommend`, {
    method: 'POST',
    headers: { ...authorized, 'content-type': 'application/json' },
    body: JSON.stringify({ session_id: 'sess_sec', message_id: 'msg_sec_1', query: 'lightweight trail running shoes for muddy paths', latency_budget_ms: 5000 }),
  });
  expect(recommended.status).toBe(200);
  const { recommendations } = (await recommended.json()) as { recommendations: { exposure_url: string; click_url: string }[] };
  expect(recommendations.length).toBeGreaterThan(0);
  expect((await fetch(recommendations[0].exposure_url)).status).toBe(204);
  expect((await fetch(recommendations[0].click_url, { redirect: 'manual' })).status).toBe(302);
  await waitFor(async () => {
    const r = await report();
    return r && r.exposures === 3 && r.clicks === 2;
  }, { timeoutMs: 90000, intervalMs: 500, what: 'the tracked recommendation in the report' });

  // Every service is connected to Redis as the ACL user, and the gateway's rate limiter ran its
  // scripts there (its keys expire within a second, so the command counts are the evidence).
  const inspector = new Redis(redisUrl('admin', adminPassword));
  try {
    const clients = String(await inspector.client('LIST'))
      .split('\n')
      .filter(Boolean)
      .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=') as [string, string])));
    for (const service of [...SERVICES, 'gateway-rate-limit']) {
      expect({ service, users: clients.filter((c) => c.name === service).map((c) => c.user) }).toEqual({ service, users: ['weave'] });
    }
    const stats = String(await inspector.info('commandstats'));
    const scripts = [...stats.matchAll(/cmdstat_(evalsha|eval):calls=(\d+),.*rejected_calls=(\d+),failed_calls=(\d+)/g)];
    expect(scripts.reduce((sum, m) => sum + Number(m[2]), 0)).toBeGreaterThan(0);
    expect(scripts.reduce((sum, m) => sum + Number(m[3]) + Number(m[4]), 0)).toBe(0);
  } finally {
    inspector.disconnect();
  }
});

it('dead-letters invalid events, which ops lists and re-drives within what its NATS user may publish', async () => {
  await producer.publishRaw('events.recommendation.shown', '{"not":"an event"', 'evt_sec_broken');
  await producer.publishRaw('events.accounting.entry', '{"entry_id":42}', 'acc_sec_broken');
  const env = { DATABASE_URL: roleUrl('gateway') };
  const listed = await waitFor(async () => {
    const out = await opsJson(['deadletters', 'list'], env);
    const letters = out.dead_letters as { sequence: number; original_subject: string; reason: string }[];
    return letters.length >= 2 ? letters : undefined;
  }, { timeoutMs: 30000, intervalMs: 500, what: 'two dead letters' });
  const shown = listed.find((l) => l.original_subject === 'events.recommendation.shown')!;
  const accounting = listed.find((l) => l.original_subject === 'events.accounting.entry')!;
  expect(shown.reason).not.toBe('');
  expect(accounting.reason).not.toBe('');

  // A recommendation event goes back onto EVENTS (ops may publish it) ...
  expect(await opsJson(['deadletters', 'redrive', '--sequence', String(shown.sequence)], env)).toMatchObject({
    sequence: shown.sequence,
    original_subject: 'events.recommendation.shown',
    stream: 'EVENTS',
  });
  // ... an accounting event is the producer's alone (DESIGN §8): refused, and the letter is kept.
  const refused = await ops(['deadletters', 'redrive', '--sequence', String(accounting.sequence)], env);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/may not publish events\.accounting\.entry; the dead letter is kept/);
  const after = (await opsJson(['deadletters', 'list'], env)).dead_letters as { sequence: number }[];
  expect(after.map((l) => l.sequence)).toContain(accounting.sequence);
  expect(after.map((l) => l.sequence)).not.toContain(shown.sequence);
});

it('nothing the services do is refused by NATS: the only violation is the forbidden re-drive', async () => {
  const log = await readFile(nats.logFile, 'utf8');
  const violations = log.split('\n').filter((line) => /Violation/i.test(line));
  expect(violations.length).toBeGreaterThan(0);
  for (const line of violations) expect(line).toMatch(/User "ops".*events\.accounting\.entry|events\.accounting\.entry.*ops/);
  for (const [service, run] of running) expect({ service, refused: run.output().match(/Permissions Violation.*/g) ?? [] }).toEqual({ service, refused: [] });
});

it('reporting-projection’s role cannot read the identity or payouts tables, nor make schemas', async () => {
  await admin(async (client) => {
    for (const table of ['identity.platform', 'identity.api_key', 'payouts.balance', 'payouts.statement', 'timezone_settings.platform_timezone']) {
      const error = await client.query(`SELECT * FROM ${table} LIMIT 1`).then(
        () => undefined,
        (e: { code?: string; message: string }) => e,
      );
      expect({ table, code: error?.code, message: error?.message }).toEqual({ table, code: '42501', message: expect.stringMatching(/permission denied for schema/) });
    }
    expect((await client.query('SELECT count(*)::int AS n FROM reporting.recommendation')).rows[0].n).toBeGreaterThan(0);
    await expect(client.query('CREATE SCHEMA sneaky')).rejects.toThrow(/permission denied for database/);
    await expect(client.query('CREATE TABLE public.sneaky (id int)')).rejects.toThrow(/permission denied for schema public/);
  }, roleUrl('reporting_projection'));
  // And the gateway's role sees nothing of reporting.
  await admin(async (client) => {
    await expect(client.query('SELECT 1 FROM reporting.recommendation LIMIT 1')).rejects.toThrow(/permission denied for schema reporting/);
  }, roleUrl('gateway'));
});

it('a service without its NATS user, or without Redis credentials, fails clearly', async () => {
  // No NATS identity: the server refuses the connection and the service does not start.
  const anonymous = await spawnService('timezone-settings', { ...serviceEnv('timezone-settings'), NATS_USER: '', NATS_PASSWORD: '' });
  strays.push(anonymous);
  await waitFor(() => /Authorization Violation/i.test(anonymous.output()), { timeoutMs: 30000, what: 'the NATS refusal in the log' });
  expect((await ready(anonymous.port))?.status).not.toBe(200);

  // Redis without the ACL user's password: not ready, and the log says why (never the password).
  for (const url of [`redis://127.0.0.1:${redis.port}`, redisUrl('weave', 'pwrong')]) {
    const run = await spawnService('payouts-read', { ...serviceEnv('payouts-read'), REDIS_URL: url });
    strays.push(run);
    const health = await waitFor(async () => {
      const answer = await ready(run.port);
      return answer && answer.status === 503 ? answer : undefined;
    }, { timeoutMs: 30000, what: 'payouts-read not ready without Redis credentials' });
    expect(health.body).toMatch(/redis/i);
    await waitFor(() => /NOAUTH|WRONGPASS/.test(run.output()), { timeoutMs: 15000, what: 'the Redis refusal in the log' });
    expect(run.output()).not.toContain(redisPassword);
    await stop(run);
  }
});

it('`npm start` with NATS_PASSWORD_<SERVICE> set connects each service as its own user', async () => {
  const superuserDb = newTestDatabase();
  const env: Record<string, string> = { ...baseEnv(), ...nats.passwordEnv, DATABASE_URL: superuserDb.url, REDIS_URL: redisUrl() };
  const ports = new Map<Service, number>();
  for (const service of SERVICES) {
    ports.set(service, await freePort());
    env[PORT_VARIABLE[service]] = String(ports.get(service));
  }
  const launcher = spawn(process.execPath, [join(ROOT, 'scripts', 'start-all.mjs')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  launcher.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  launcher.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', resolve));
  try {
    for (const service of SERVICES) {
      await waitFor(async () => (await ready(ports.get(service)!))?.status === 200, { timeoutMs: 60000, intervalMs: 250, what: `${service} ready under npm start` }).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n--- launcher ---\n${output.slice(-3000)}`);
        },
      );
    }
    const connz = (await (await fetch(`${nats.monitorUrl}/connz?auth=true&limit=1000`)).json()) as { connections: { name?: string; authorized_user?: string }[] };
    for (const service of SERVICES) {
      const users = connz.connections.filter((c) => c.name === service).map((c) => c.authorized_user);
      // The processes of the earlier tests, and the launcher's: each as its own user.
      expect({ service, users: [...new Set(users)] }).toEqual({ service, users: [service] });
      expect(users.length).toBe(2);
    }
  } finally {
    launcher.kill('SIGTERM');
    await exited;
    await superuserDb.drop();
  }
});
