import { jetstream } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import { Streams } from '#libs/contracts';
import { NatsClient, ensureStreams } from '#libs/nats';
import { newTestDatabase, startReportingProjection, startSecuredNats, type SecuredNats, type TestDatabase } from '../support/index.js';

/**
 * Item 11 of issue 12: EVENTS_MAX_AGE_DAYS / DEAD_LETTERS_MAX_AGE_DAYS become the max_age of
 * the streams at start, on a new stream and on an existing one (keeping its messages and the
 * rest of its configuration), 0 keeps everything; a NATS user that may not change a stream
 * (deploy/nats/users.conf) leaves it alone with a warning.
 */

const DAY_NS = nanos(24 * 60 * 60 * 1000);
let nats: SecuredNats;
let db: TestDatabase;
const clients: NatsClient[] = [];

async function client(user: 'reporting-projection' | 'gateway' | 'ops'): Promise<NatsClient> {
  const c = await NatsClient.connect({ servers: [nats.url], name: user, identity: nats.credentials(user) });
  clients.push(c);
  return c;
}

async function maxAges(c: NatsClient): Promise<Record<string, number>> {
  const ages: Record<string, number> = {};
  for (const name of [Streams.events, Streams.deadLetters, Streams.settings]) ages[name] = (await c.manager.streams.info(name)).config.max_age;
  return ages;
}

function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug'), child: () => logger };
  return { lines, logger: logger as never };
}

beforeAll(async () => {
  nats = await startSecuredNats();
  db = newTestDatabase();
});

afterAll(async () => {
  for (const c of clients) await c.drain();
  await nats?.stop();
  await db?.drop();
});

it('reporting-projection creates the streams with the retention of its env at start', async () => {
  const service = await startReportingProjection({
    natsUrl: nats.url,
    databaseUrl: db.url,
    ...nats.identityEnv('reporting-projection'),
    EVENTS_MAX_AGE_DAYS: 30,
    DEAD_LETTERS_MAX_AGE_DAYS: 7,
  });
  try {
    expect(await maxAges(await client('ops'))).toEqual({ [Streams.events]: 30 * DAY_NS, [Streams.deadLetters]: 7 * DAY_NS, [Streams.settings]: 0 });
  } finally {
    await service.close();
  }
});

it('updates an existing stream’s max_age and keeps its messages and the rest of its configuration', async () => {
  const owner = await client('reporting-projection');
  const before = await owner.manager.streams.info(Streams.events);
  const nc = await connect({ servers: nats.url, ...nats.credentials('producer') });
  for (let i = 0; i < 3; i++) await jetstream(nc).publish('events.recommendation.shown', `{"n":${i}}`, { msgID: `retention-${i}` });
  await nc.drain();

  const { lines, logger } = recordingLogger();
  await ensureStreams(owner.manager, { retention: { eventsMaxAgeDays: 400, deadLettersMaxAgeDays: 0 }, logger });
  const after = await owner.manager.streams.info(Streams.events);
  expect(after.config.max_age).toBe(400 * DAY_NS);
  expect(after.state.messages).toBe(before.state.messages + 3);
  const { max_age: _a, ...restAfter } = after.config;
  const { max_age: _b, ...restBefore } = before.config;
  expect(restAfter).toEqual(restBefore);
  // 0: keep forever.
  expect((await owner.manager.streams.info(Streams.deadLetters)).config.max_age).toBe(0);
  expect(lines.filter((l) => l.msg === 'stream retention updated').map((l) => l.fields.stream).sort()).toEqual([Streams.deadLetters, Streams.events]);

  // The same settings again change nothing.
  const again = recordingLogger();
  await ensureStreams(owner.manager, { retention: { eventsMaxAgeDays: 400, deadLettersMaxAgeDays: 0 }, logger: again.logger });
  expect(again.lines).toEqual([]);
  // Without a retention (ops, tests) the streams are left as they are.
  await ensureStreams(owner.manager);
  expect(await maxAges(owner)).toEqual({ [Streams.events]: 400 * DAY_NS, [Streams.deadLetters]: 0, [Streams.settings]: 0 });
});

it('a user that may not change streams leaves them as they are, with a warning, and still starts', async () => {
  const gateway = await client('gateway');
  const { lines, logger } = recordingLogger();
  await ensureStreams(gateway.manager, { retention: { eventsMaxAgeDays: 1, deadLettersMaxAgeDays: 1 }, logger });
  expect(await maxAges(gateway)).toEqual({ [Streams.events]: 400 * DAY_NS, [Streams.deadLetters]: 0, [Streams.settings]: 0 });
  expect(lines.filter((l) => l.level === 'warn').map((l) => l.fields.stream).sort()).toEqual([Streams.deadLetters, Streams.events]);
});

it('NATS_STREAM_REPLICAS: 1 leaves a single server’s streams as they are; more copies than servers fails at start, loudly', async () => {
  const owner = await client('reporting-projection');
  const { lines, logger } = recordingLogger();
  await ensureStreams(owner.manager, { replicas: 1, logger });
  expect(lines).toEqual([]);
  for (const name of [Streams.events, Streams.deadLetters, Streams.settings]) expect((await owner.manager.streams.info(name)).config.num_replicas).toBe(1);
  // Three copies need a JetStream cluster of three: the service must not start as if it had them.
  await expect(ensureStreams(owner.manager, { replicas: 3, logger })).rejects.toThrow(/replicas|cluster/i);
  expect((await owner.manager.streams.info(Streams.events)).config.num_replicas).toBe(1);
});
