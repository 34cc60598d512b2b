import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { connect, type NatsConnection, type Status } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { EventSubjects, RpcSubjects, Streams } from '#libs/contracts';
import { NatsClient, ensureDurableConsumer, ensureStreams } from '#libs/nats';
import { NATS_CONFIG_FILE, NATS_USERS, natsPasswordVariable, startSecuredNats, type NatsUser, type SecuredNats } from '../support/index.js';

/**
 * deploy/nats/nats-server.conf on the real nats-server (DESIGN §8): who may connect, publish,
 * request and subscribe. Every "may not" is answered by the server itself (a permissions
 * violation), not by our code. The services doing all their work under these users is
 * test/e2e/secured-stack.spec.ts.
 */

const run = promisify(execFile);
let nats: SecuredNats;
const open: NatsConnection[] = [];

/** A user's connection as the services make it (their own inbox prefix). */
async function as(user: NatsUser, inboxPrefix = `_INBOX_${user}`): Promise<NatsConnection & { errors: Status[] }> {
  const nc = await connect({ servers: nats.url, ...nats.credentials(user), inboxPrefix, reconnect: false });
  open.push(nc);
  const errors: Status[] = [];
  void (async () => {
    for await (const status of nc.status()) if (status.type === 'error') errors.push(status);
  })();
  return Object.assign(nc, { errors });
}

/** 'allowed' when the server kept the subscription, else the server's refusal. */
async function subscribeOutcome(nc: NatsConnection, subject: string, queue?: string): Promise<string> {
  const sub = nc.subscribe(subject, { queue });
  await nc.flush();
  const outcome = await Promise.race([sub.closed.then((e) => (e instanceof Error ? e.message : 'closed')), new Promise<string>((r) => setTimeout(() => r('allowed'), 50))]);
  if (outcome === 'allowed') sub.unsubscribe();
  return outcome;
}

/** 'allowed' when a core publish raised no permissions error. */
async function publishOutcome(nc: NatsConnection & { errors: Status[] }, subject: string): Promise<string> {
  const before = nc.errors.length;
  nc.publish(subject, 'x');
  await nc.flush();
  await new Promise((r) => setTimeout(r, 20));
  const error = nc.errors.slice(before).find((s) => String((s as { error?: Error }).error?.message).includes(subject));
  return error ? String((error as { error?: Error }).error?.message) : 'allowed';
}

/** The outcome of a JetStream publish (a request to the stream). */
async function jsPublishOutcome(nc: NatsConnection, subject: string, payload = '{}'): Promise<string> {
  try {
    const ack = await jetstream(nc).publish(subject, payload, { timeout: 2000 });
    return `stored in ${ack.stream}`;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

async function requestOutcome(nc: NatsConnection, subject: string): Promise<string> {
  try {
    const reply = await nc.request(subject, '{}', { timeout: 1000 });
    return `answered ${reply.string()}`;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

const DENIED = /Permissions Violation/i;

beforeAll(async () => {
  nats = await startSecuredNats();
  // The streams, as reporting-projection creates them at start under its own user.
  const service = await NatsClient.connect({ servers: [nats.url], name: 'reporting-projection', identity: nats.credentials('reporting-projection') });
  await ensureStreams(service.manager);
  await ensureDurableConsumer(service.manager, {
    stream: Streams.events,
    durable: 'reporting-projection',
    filterSubject: EventSubjects.all,
    ackWaitMs: 30000,
    maxAckPending: 100,
  });
  await service.drain();
});

afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => undefined);
  await nats?.stop();
});

describe('authentication', () => {
  it('refuses a client without credentials, with a wrong password, or with an unknown user', async () => {
    for (const options of [{}, { user: 'producer', pass: 'pwrong' }, { user: 'admin', pass: nats.passwords.ops }, { user: 'gateway', pass: nats.passwords.producer }]) {
      await expect(connect({ servers: nats.url, reconnect: false, ...options })).rejects.toThrow(/Authorization Violation/);
    }
  });

  it('accepts every user of DESIGN §8 with its own password', async () => {
    for (const user of NATS_USERS) {
      const nc = await as(user);
      await nc.flush();
      expect(nc.isClosed()).toBe(false);
    }
    const connz = (await (await fetch(`${nats.monitorUrl}/connz?auth=true`)).json()) as { connections: { authorized_user?: string }[] };
    expect(new Set(connz.connections.map((c) => c.authorized_user))).toEqual(new Set(NATS_USERS));
  });

  it('does not start while one of the passwords is missing', async () => {
    const env = { ...process.env, ...nats.passwordEnv };
    delete env[natsPasswordVariable('payouts-read')];
    const result = await run('nats-server', ['-c', NATS_CONFIG_FILE, '-t'], { env }).then(
      () => ({ failed: false, stderr: '' }),
      (error: { stderr: string }) => ({ failed: true, stderr: error.stderr }),
    );
    expect(result.failed).toBe(true);
    expect(result.stderr).toContain('NATS_PASSWORD_PAYOUTS_READ');
  });
});

describe('producer', () => {
  it('publishes recommendation, accounting and payout events into EVENTS', async () => {
    const producer = await as('producer', '_INBOX');
    for (const subject of ['events.recommendation.shown', 'events.recommendation.converted', EventSubjects.accountingEntry, EventSubjects.accountingReconciled, EventSubjects.payoutsBalance, EventSubjects.payoutsStatement]) {
      expect({ subject, outcome: await jsPublishOutcome(producer, subject) }).toEqual({ subject, outcome: `stored in ${Streams.events}` });
    }
  });

  it('may not request payouts.v1.* or any request subject, nor subscribe to reporting.v1.report.get', async () => {
    const producer = await as('producer', '_INBOX');
    for (const subject of [RpcSubjects.payoutsBalanceGet, RpcSubjects.payoutsStatementsList, RpcSubjects.reportGet, RpcSubjects.timezoneSet, RpcSubjects.recommend]) {
      expect({ subject, outcome: await requestOutcome(producer, subject) }).toEqual({ subject, outcome: expect.stringMatching(DENIED) });
    }
    expect(await subscribeOutcome(producer, RpcSubjects.reportGet, 'reporting-projection')).toMatch(DENIED);
    expect(await subscribeOutcome(producer, RpcSubjects.reportGet)).toMatch(DENIED);
    expect(await subscribeOutcome(producer, 'events.>')).toMatch(DENIED);
  });

  it('publishes nothing else of the system: settings, dead letters, broadcasts, the JetStream API', async () => {
    const producer = await as('producer', '_INBOX');
    for (const subject of ['settings.timezone.changed', 'deadletter.events.accounting.entry', 'identity.v1.changed', 'payouts.v1.changed', 'reporting.v1.published', '$JS.API.STREAM.DELETE.EVENTS', '$JS.API.STREAM.PURGE.EVENTS', '$JS.API.CONSUMER.MSG.NEXT.EVENTS.reporting-projection']) {
      expect({ subject, outcome: await publishOutcome(producer, subject) }).toEqual({ subject, outcome: expect.stringMatching(DENIED) });
    }
  });
});

describe('who publishes which events', () => {
  it('no user but producer publishes events.accounting.* or events.payouts.*', async () => {
    for (const user of NATS_USERS.filter((u) => u !== 'producer')) {
      const nc = await as(user);
      for (const subject of [EventSubjects.accountingEntry, EventSubjects.accountingReconciled, EventSubjects.payoutsBalance, EventSubjects.payoutsReadiness, EventSubjects.payoutsStatement]) {
        expect({ user, subject, outcome: await jsPublishOutcome(nc, subject) }).toEqual({ user, subject, outcome: expect.stringMatching(DENIED) });
      }
    }
  });

  it('the gateway publishes only the tracking kinds shown and clicked, recommendations only generated', async () => {
    const gateway = await as('gateway');
    const recommendations = await as('recommendations');
    const kinds = ['generated', 'shown', 'mentioned', 'clicked', 'engaged', 'converted'];
    const outcomes = async (nc: NatsConnection) =>
      Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, DENIED.test(await jsPublishOutcome(nc, `events.recommendation.${k}`)) ? 'denied' : 'stored'])));
    expect(await outcomes(gateway)).toEqual({ generated: 'denied', shown: 'stored', mentioned: 'denied', clicked: 'stored', engaged: 'denied', converted: 'denied' });
    expect(await outcomes(recommendations)).toEqual({ generated: 'stored', shown: 'denied', mentioned: 'denied', clicked: 'denied', engaged: 'denied', converted: 'denied' });
  });

  it('only timezone-settings publishes settings changes', async () => {
    for (const user of NATS_USERS) {
      const outcome = await jsPublishOutcome(await as(user), 'settings.timezone.changed');
      expect({ user, denied: DENIED.test(outcome) }).toEqual({ user, denied: user !== 'timezone-settings' && user !== 'ops' });
    }
  });
});

describe('request/reply', () => {
  const AREAS: { subject: string; owner: NatsUser }[] = [
    { subject: RpcSubjects.reportGet, owner: 'reporting-projection' },
    { subject: RpcSubjects.payoutsBalanceGet, owner: 'payouts-read' },
    { subject: RpcSubjects.payoutsStatementsList, owner: 'payouts-read' },
    { subject: RpcSubjects.timezoneGet, owner: 'timezone-settings' },
    { subject: RpcSubjects.timezoneSet, owner: 'timezone-settings' },
    { subject: RpcSubjects.recommend, owner: 'recommendations' },
  ];

  it('only the owning service subscribes to its request subjects', async () => {
    for (const { subject, owner } of AREAS) {
      for (const user of NATS_USERS) {
        const outcome = await subscribeOutcome(await as(user), subject, owner);
        expect({ subject, user, allowed: outcome === 'allowed' }).toEqual({ subject, user, allowed: user === owner });
      }
    }
  });

  it('only the gateway sends requests, and gets the owner’s answer on its own inbox', async () => {
    const gateway = await as('gateway');
    for (const { subject, owner } of AREAS) {
      const responder = await as(owner);
      // The responder answers through allow_responses: only to the reply subject it was given.
      responder.subscribe(subject, { queue: owner, callback: (_, msg) => void msg.respond(`{"ok":true,"from":"${owner}"}`) });
      await responder.flush();
      expect(await requestOutcome(gateway, subject)).toBe(`answered {"ok":true,"from":"${owner}"}`);
      for (const user of NATS_USERS.filter((u) => u !== 'gateway')) {
        expect({ subject, user, outcome: await requestOutcome(await as(user), subject) }).toEqual({ subject, user, outcome: expect.stringMatching(DENIED) });
      }
      await responder.close();
    }
  });

  it('no user reads another’s replies, and a responder writes to no inbox it was not asked from', async () => {
    const gateway = await as('gateway');
    const payouts = await as('payouts-read');
    // Another user subscribing to the gateway's inbox, or to every inbox, is refused.
    for (const user of NATS_USERS.filter((u) => u !== 'gateway')) {
      expect({ user, outcome: await subscribeOutcome(await as(user), '_INBOX_gateway.>') }).toEqual({ user, outcome: expect.stringMatching(DENIED) });
      expect({ user, outcome: await subscribeOutcome(await as(user), '>') }).toEqual({ user, outcome: expect.stringMatching(DENIED) });
    }
    // The producer's stock inbox (`_INBOX.>`) does not cover the services' prefixes.
    const producer = await as('producer', '_INBOX');
    const seen: string[] = [];
    producer.subscribe('_INBOX.>', { callback: (_, msg) => void seen.push(msg.subject) });
    await producer.flush();
    payouts.subscribe(RpcSubjects.payoutsBalanceGet, { queue: 'payouts-read', callback: (_, msg) => void msg.respond('{"ok":true,"result":{}}') });
    await payouts.flush();
    expect(await requestOutcome(gateway, RpcSubjects.payoutsBalanceGet)).toMatch(/^answered/);
    await producer.flush();
    expect(seen).toEqual([]);
    // Publishing into someone's inbox unasked (a forged reply) is refused.
    expect(await publishOutcome(payouts, '_INBOX_gateway.forged.1')).toMatch(DENIED);
  });

  it('the gateway may not publish the owners’ broadcasts nor answer requests', async () => {
    const gateway = await as('gateway');
    for (const subject of ['reporting.v1.published', 'payouts.v1.changed', 'settings.timezone.changed', 'deadletter.events.recommendation.shown']) {
      expect({ subject, outcome: await publishOutcome(gateway, subject) }).toEqual({ subject, outcome: expect.stringMatching(DENIED) });
    }
  });
});

describe('JetStream administration', () => {
  it('a durable consumer is pulled only by its owner, and no user deletes or purges a stream', async () => {
    for (const user of NATS_USERS.filter((u) => u !== 'reporting-projection')) {
      const nc = await as(user);
      expect({ user, outcome: await requestOutcome(nc, '$JS.API.CONSUMER.MSG.NEXT.EVENTS.reporting-projection') }).toEqual({ user, outcome: expect.stringMatching(DENIED) });
      expect({ user, outcome: await requestOutcome(nc, '$JS.API.CONSUMER.CREATE.EVENTS') }).toEqual({ user, outcome: expect.stringMatching(DENIED) });
      // Only ops (replays) removes a durable.
      if (user !== 'ops') expect({ user, outcome: await requestOutcome(nc, '$JS.API.CONSUMER.DELETE.EVENTS.reporting-projection') }).toEqual({ user, outcome: expect.stringMatching(DENIED) });
    }
    for (const user of NATS_USERS) {
      const nc = await as(user);
      for (const subject of ['$JS.API.STREAM.DELETE.EVENTS', '$JS.API.STREAM.PURGE.EVENTS', '$JS.API.STREAM.DELETE.DEAD_LETTERS', '$JS.API.STREAM.MSG.DELETE.EVENTS']) {
        expect({ user, subject, outcome: await requestOutcome(nc, subject) }).toEqual({ user, subject, outcome: expect.stringMatching(DENIED) });
      }
    }
    // The owner pulls its own consumer.
    const owner = await as('reporting-projection');
    const consumer = await jetstream(owner).consumers.get(Streams.events, 'reporting-projection');
    const batch = await consumer.fetch({ max_messages: 1, expires: 1000 });
    const messages = [];
    for await (const message of batch) messages.push(message);
    expect(messages.length).toBe(1);
  });

  it('only reporting-projection and ops change a stream’s settings', async () => {
    for (const user of NATS_USERS) {
      const manager = await jetstreamManager(await as(user), { checkAPI: false });
      const outcome = await manager.streams.update(Streams.deadLetters, { description: `by ${user}` }).then(
        () => 'updated',
        (error: Error) => error.message,
      );
      expect({ user, allowed: outcome === 'updated' }).toEqual({ user, allowed: user === 'reporting-projection' || user === 'ops' });
    }
  });
});

describe('ops', () => {
  it('repositions a durable consumer for a replay (docs/operations.md), which its owner then pulls', async () => {
    const manager = await jetstreamManager(await as('ops'), { checkAPI: false });
    const info = await manager.consumers.info(Streams.events, 'payouts-read').catch(() => undefined);
    expect(info).toBeUndefined();
    await manager.consumers.add(Streams.events, {
      durable_name: 'payouts-read',
      filter_subject: 'events.payouts.>',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: new Date(0).toISOString(),
    });
    await manager.consumers.delete(Streams.events, 'payouts-read');
    await manager.consumers.add(Streams.events, { durable_name: 'payouts-read', filter_subject: 'events.payouts.>', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
    const owner = await as('payouts-read');
    const consumer = await jetstream(owner).consumers.get(Streams.events, 'payouts-read');
    const messages = [];
    for await (const message of await consumer.fetch({ max_messages: 10, expires: 1000 })) messages.push(message.subject);
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((s) => s.startsWith('events.payouts.'))).toBe(true);
    // ... but neither reads the messages itself nor makes consumers of other names.
    expect(await requestOutcome(await as('ops'), '$JS.API.CONSUMER.MSG.NEXT.EVENTS.payouts-read')).toMatch(DENIED);
    expect(await requestOutcome(await as('ops'), '$JS.API.CONSUMER.CREATE.EVENTS.snoop.events.>')).toMatch(DENIED);
  });
});
