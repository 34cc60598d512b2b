import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { IdentityRepository, createIdentityDataSource, type KeyMode } from '#libs/identity';
import { NatsClient } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { connectProducer, prepareStreams, type Producer } from './events.js';
import { generateTestKey, startGatewayWithOidc, startJwksServer, type JwksServer, type TestKey } from './oidc.js';
import { newTestDatabase, startNats, type NatsServerOptions, type TestDatabase, type TestNats } from './servers.js';

/** Anything a test starts and ends: services, clients, servers. */
export type Closable = { close(): Promise<unknown> | unknown };

/**
 * The servers a spec file runs against, started in its beforeAll and ended in its afterAll:
 * its own nats-server and database (see servers.ts), and whatever the spec hands to `track`,
 * ended last-started first, after the tests and before the servers.
 */
export interface TestStack {
  readonly nats: TestNats;
  readonly db: TestDatabase;
  /** `{ natsUrl, databaseUrl }`, what every start helper takes. */
  readonly urls: { natsUrl: string; databaseUrl: string };
  /** Ends `resource` (its close()) in the file's afterAll; returns it. */
  track<T extends Closable>(resource: T): T;
  /** Runs `end` in the file's afterAll, e.g. for a service a test may have stopped and replaced. */
  atEnd(end: () => Promise<unknown> | unknown): void;
}

export interface StackOptions {
  /** Create the streams before the tests (for specs that publish before any service runs). */
  streams?: boolean;
  /** How nats-server is started (see NatsServerOptions). */
  nats?: NatsServerOptions;
}

/**
 * Registers beforeAll/afterAll hooks that start and end a TestStack; call it at the top of a
 * spec file (or of a describe block). Its fields are there once beforeAll has run.
 */
export function useTestStack(options: StackOptions = {}): TestStack {
  let nats: TestNats | undefined;
  let db: TestDatabase | undefined;
  const ends: (() => Promise<unknown> | unknown)[] = [];
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the test stack's ${what} is used before its beforeAll ran`);
    return value;
  };
  const stack: TestStack = {
    get nats() {
      return started(nats, 'nats');
    },
    get db() {
      return started(db, 'database');
    },
    get urls() {
      return { natsUrl: stack.nats.url, databaseUrl: stack.db.url };
    },
    track(resource) {
      ends.push(() => resource.close());
      return resource;
    },
    atEnd(end) {
      ends.push(end);
    },
  };
  beforeAll(async () => {
    nats = await startNats(options.nats);
    db = newTestDatabase();
    if (options.streams) await prepareStreams(nats.url);
  });
  afterAll(async () => {
    const failures: unknown[] = [];
    for (const end of ends.splice(0).reverse()) {
      try {
        await end();
      } catch (error) {
        failures.push(error);
      }
    }
    await nats?.stop();
    await db?.drop();
    if (failures.length) throw failures[0];
  });
  return stack;
}

export interface TestGateway {
  app: NestFastifyApplication;
  /** http://127.0.0.1:<port> */
  base: string;
  close(): Promise<void>;
}

/**
 * Starts the gateway on the stack's servers (see startGatewayWithOidc for the settings), ended
 * with the stack (or before by close(), which ends it once).
 */
export async function startGateway(
  stack: TestStack,
  settings: { jwksUrl?: string; oidc?: boolean; extra?: Record<string, string>; logger?: Logger; trackingSecret?: false } = {},
): Promise<TestGateway> {
  const { app, base } = await startGatewayWithOidc({ ...stack.urls, ...settings });
  let closed: Promise<void> | undefined;
  // Once: a test may stop it before the stack does.
  return stack.track({ app, base, close: () => (closed ??= app.close()) });
}

/** A test identity provider (a key and a JWKS server over HTTP), ended with the stack. */
export async function startIdentityProvider(
  stack: TestStack,
  keys: (TestKey | 'RS256' | 'ES256')[] = ['RS256'],
): Promise<{ jwks: JwksServer; keys: TestKey[]; key: TestKey }> {
  const made = await Promise.all(keys.map((k) => (typeof k === 'string' ? generateTestKey(k) : k)));
  const jwks = stack.track(await startJwksServer(made));
  return { jwks, keys: made, key: made[0] };
}

/** A producer (JetStream publisher as DESIGN §4 describes it) on the stack's NATS, ended with the stack. */
export async function connectStackProducer(stack: TestStack): Promise<Producer> {
  return stack.track(await connectProducer(stack.nats.url));
}

/** The services' own NATS client (#libs/nats) on the stack's server, drained with the stack. */
export async function connectNatsClient(stack: TestStack, name: string): Promise<NatsClient> {
  const client = await NatsClient.connect({ servers: [stack.nats.url], name });
  stack.atEnd(() => client.drain());
  return client;
}

/** A plain PostgreSQL client on the stack's database (for looking behind a service), ended with the stack. */
export async function connectSql(stack: TestStack): Promise<pg.Client> {
  const sql = new pg.Client({ connectionString: stack.db.url });
  await sql.connect();
  stack.atEnd(() => sql.end());
  return sql;
}

const identities = new WeakMap<TestStack, Promise<{ dataSource: DataSource; repository: IdentityRepository }>>();

function identityEntry(stack: TestStack): Promise<{ dataSource: DataSource; repository: IdentityRepository }> {
  let entry = identities.get(stack);
  if (!entry) {
    entry = (async () => {
      const dataSource = createIdentityDataSource(stack.db.url, 2, 'test-seed');
      await dataSource.initialize();
      await dataSource.runMigrations();
      stack.atEnd(() => (dataSource.isInitialized ? dataSource.destroy() : undefined));
      return { dataSource, repository: new IdentityRepository(dataSource) };
    })();
    identities.set(stack, entry);
  }
  return entry;
}

/**
 * The identity repository on the stack's database (one DataSource per stack, migrated, ended
 * with the stack): what the ops CLI writes platforms and keys through.
 */
export async function identityOf(stack: TestStack): Promise<IdentityRepository> {
  return (await identityEntry(stack)).repository;
}

/** The DataSource behind identityOf, for the identity schema's other tables (e.g. the gateway's outbox). */
export async function identityDataSourceOf(stack: TestStack): Promise<DataSource> {
  return (await identityEntry(stack)).dataSource;
}

export interface SeededPlatform<M extends KeyMode> {
  agent: string;
  /** The secret of one key per mode asked for. */
  keys: Record<M, string>;
  /** The first of them (the live key by default). */
  key: string;
  identity: IdentityRepository;
}

/**
 * Creates an active platform `agent` (owned by `owner` when given) and one API key per mode in
 * `keys` (default: a live key), as `npm run ops -- platform create` / `key create` do.
 */
export async function seedPlatform<M extends KeyMode = 'live'>(
  stack: TestStack,
  agent: string,
  options: { owner?: string; keys?: M[] } = {},
): Promise<SeededPlatform<M>> {
  const identity = await identityOf(stack);
  await identity.createPlatform(agent, options.owner);
  const modes = options.keys ?? (['live'] as M[]);
  const keys = {} as Record<M, string>;
  for (const mode of modes) keys[mode] = (await identity.createKey(agent, mode)).api_key;
  return { agent, keys, key: modes.length ? keys[modes[0]] : '', identity };
}
