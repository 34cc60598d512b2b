import { join, relative, resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import { Streams, type Traffic } from '#libs/contracts';
import { initializeDatabase } from '#libs/database';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createRecommendationsDataSource, importCatalog, readCatalogFile, type CatalogImportResult } from '#libs/catalog';
import { DEMO_PLATFORM } from '#libs/demo';
import {
  IdentityRepository,
  PlatformEntity,
  createIdentityDataSource,
  type KeyMode,
} from '#libs/identity';
import { ensureStreams, natsAuthOptions } from '#libs/nats';
import { describeServerOutcome, privateNatsSettings, provideLocalServers, type LocalServers } from '#libs/servers';
import { natsIdentity, natsServers, streamRetention, databaseUrl, natsTls } from '#libs/config';
import type { DemoEnv } from './config/demo.env.js';
import { demoKeys, type DemoKey } from './platform/demo-keys.js';
import { progress } from './publish/progress.js';
import { alreadyInStream, rememberInStream } from './publish/published-marker.js';
import { publishAll, type PublishOutcome } from './publish/publisher.js';
import { expectedReport, type ExpectedReport } from './week/expected-report.js';
import { buildDemoPayouts, type DemoPayouts } from './week/payouts-plan.js';
import { DAY_MS, MINUTE_MS, buildDemoWeek } from './week/week-plan.js';

export interface DemoResult {
  agent_id: string;
  owner_uid: string;
  platform_created: boolean;
  keys: Record<KeyMode, DemoKey>;
  /** Where the keys' secrets are kept for the next runs. */
  keys_file: string;
  /** The ads imported from the sample catalog (as `ops ads import` does), so that recommendations find them. */
  catalog: CatalogImportResult & { file: string };
  week: { start: string; end: string; recommendations: number };
  /** already_in_stream: an earlier run's week is in the stream, so nothing was published. */
  published: PublishOutcome & { already_in_stream: boolean };
  /** What GET /agent/reporting?time_range=all shows for each traffic, from the published events. */
  expected_reports: Record<Traffic, ExpectedReport & { time_range: 'all' }>;
  /** Until when time_range=7d shows the same figures as `all` for live traffic. */
  seven_days_equal_all_until: string;
  payouts: Omit<DemoPayouts, 'messages'>;
  gateway: { url: string; ready: boolean };
}

/** Status lines for a person (stderr: stdout carries the result). */
export type Say = (line: string) => void;

export class DemoFailure extends Error {}

async function gatewayReady(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1500) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * `npm run demo`: the demo platform with its owner and keys, and a week of its activity
 * published through JetStream as the internal producers publish it. Needs NATS and
 * PostgreSQL: those that do not answer are started privately (as `npm start` does, on the same
 * data) for the run. Idempotent: the week is anchored at the platform's creation, so a second
 * run publishes the same events under the same ids, and keeps the keys.
 */
export async function runDemo(env: DemoEnv, say: Say): Promise<DemoResult> {
  const dataDir = resolve(env.LAUNCHER_DATA_DIR);
  const servers: LocalServers = await provideLocalServers({
    urls: { nats: env.NATS_URL, postgres: env.DATABASE_URL },
    dataDir,
    // Paths are the repository's: npm runs the demo there.
    nats: privateNatsSettings(process.env, resolve('deploy', 'nats', 'nats-server.conf')),
  });
  if (!servers.ok) {
    const lines = servers.outcomes.filter((o) => o.state === 'failed').map((o) => describeServerOutcome(o));
    throw new DemoFailure(lines.join('\n'));
  }
  for (const outcome of servers.outcomes.filter((o) => o.state === 'started')) {
    say(`${describeServerOutcome(outcome)}; it stops when the demo ends`);
  }
  let dataSource: DataSource | undefined;
  let nats: NatsConnection | undefined;
  try {
    dataSource = createIdentityDataSource(databaseUrl(env), 2, 'demo');
    await initializeDatabase(dataSource);
    const identity = new IdentityRepository(dataSource);
    const platform = await identity.createPlatform(DEMO_PLATFORM.agentId, DEMO_PLATFORM.ownerUid);
    // The week ends when the platform was created: every later run rebuilds the same week.
    const { created_at: anchor } = await dataSource.getRepository(PlatformEntity).findOneByOrFail({ agent_id: DEMO_PLATFORM.agentId });
    const keysFile = join(dataDir, 'demo', 'keys.json');
    const keys = await demoKeys(identity, DEMO_PLATFORM.agentId, keysFile);
    say(`demo platform ${DEMO_PLATFORM.agentId} (owner ${DEMO_PLATFORM.ownerUid}): ${platform.created ? 'created' : 'exists'}; keys: ${(['live', 'test'] as const).map((m) => `${m} ${keys[m].created ? 'created' : 'kept'}`).join(', ')}`);

    const catalog = await importCatalogFile(env.DATABASE_URL, resolve(env.DEMO_CATALOG_FILE));
    say(
      `catalog ${relative(process.cwd(), catalog.file)}: ${catalog.imported} ads (${catalog.created} created, ${catalog.updated} updated, ${catalog.unchanged} unchanged)`,
    );

    // An internal producer's connection (DESIGN §4, §8): as `producer` when its password is given.
    const natsUser = natsIdentity(env) ?? (env.NATS_PASSWORD_PRODUCER ? { user: 'producer', pass: env.NATS_PASSWORD_PRODUCER } : undefined);
    nats = await connect({ servers: natsServers(env.NATS_URL), name: 'demo', ...(await natsAuthOptions(natsUser, 'demo')), ...(natsTls(env) ? { tls: natsTls(env) } : {}) });
    // The producer may not call the JetStream API (deploy/nats/users.conf): then the services
    // have created the streams, and the stream's duplicate detection stands in for the marker.
    const manager = natsUser?.user === 'producer' ? undefined : await jetstreamManager(nats);
    if (manager) await ensureStreams(manager, { retention: streamRetention(env), replicas: env.NATS_STREAM_REPLICAS });
    const week = buildDemoWeek(anchor, DEMO_PLATFORM.agentId);
    const payouts = buildDemoPayouts(week);
    const messages = [...week.messages, ...payouts.messages].sort((a, b) => a.at - b.at);
    const markerFile = join(dataDir, 'demo', 'published.json');
    const lastId = messages[messages.length - 1].id;
    const storedAt = manager ? await alreadyInStream(manager, markerFile, Streams.events, lastId) : undefined;
    let published: PublishOutcome & { already_in_stream: boolean };
    if (storedAt !== undefined) {
      say(`the week is already in stream ${Streams.events} (its last message at sequence ${storedAt}): nothing to publish`);
      published = { published: 0, stored: 0, duplicates: 0, already_in_stream: true };
    } else {
      const bar = progress(process.stderr, 'publishing', messages.length);
      const outcome = await publishAll(jetstream(nats), messages, (done) => bar.update(done));
      bar.finish(outcome.published);
      if (outcome.last) await rememberInStream(markerFile, outcome.last);
      published = { ...outcome, already_in_stream: false };
    }

    const now = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
    const firstMinute = Math.floor(Math.min(...week.recommendations.map((r) => r.createdAt)) / MINUTE_MS) * MINUTE_MS;
    const all = (traffic: Traffic) => ({ time_range: 'all' as const, ...expectedReport(week, traffic, null, Math.max(now, week.end + MINUTE_MS)) });
    const { messages: _published, ...payoutsSummary } = payouts;
    const gatewayUrl = env.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? `http://127.0.0.1:${env.PORT}`;
    return {
      agent_id: DEMO_PLATFORM.agentId,
      owner_uid: DEMO_PLATFORM.ownerUid,
      platform_created: platform.created,
      keys,
      keys_file: keysFile,
      catalog,
      week: { start: new Date(week.start).toISOString(), end: new Date(week.end).toISOString(), recommendations: week.recommendations.length },
      published,
      expected_reports: { live: all('live'), test: all('test') },
      seven_days_equal_all_until: new Date(firstMinute + 7 * DAY_MS).toISOString(),
      payouts: payoutsSummary,
      gateway: { url: gatewayUrl, ready: await gatewayReady(gatewayUrl) },
    };
  } finally {
    await nats?.drain().catch(() => nats?.close());
    if (dataSource?.isInitialized) await dataSource.destroy();
    await servers.stop();
  }
}

/** `ops ads import --file <file>`: the whole file validated, then upserted by ad_id (idempotent). */
async function importCatalogFile(databaseUrl: string, file: string): Promise<CatalogImportResult & { file: string }> {
  const ads = await readCatalogFile(file);
  const dataSource = createRecommendationsDataSource(databaseUrl, 2, 'demo');
  try {
    await initializeDatabase(dataSource);
    return { ...(await importCatalog(dataSource, ads)), file };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}
