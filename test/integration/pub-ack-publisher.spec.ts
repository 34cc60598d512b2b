import { DiscardPolicy, JetStreamApiError, StorageType } from '@nats-io/jetstream';
import { ClosedConnectionError, NoRespondersError, TimeoutError } from '@nats-io/transport-node';
import { Streams } from '#libs/contracts';
import { NatsClient, PubAckPublisher, ensureStreams } from '#libs/nats';
import { startNats, startSecuredNats, type TestNats } from '../support/index.js';

/**
 * PubAckPublisher against a real nats-server: the PubAck of each publish through the one reply
 * subscription, duplicates, "no responders", the JetStream API's error reply, timeouts with a
 * late ack, the connection closing, and many publishes at once.
 */

let nats: TestNats;
let client: NatsClient;
const encoder = new TextEncoder();
const data = (n: number) => encoder.encode(JSON.stringify({ n }));

beforeAll(async () => {
  nats = await startNats();
  client = await NatsClient.connect({ servers: [nats.url], name: 'pub-ack-publisher-spec' });
  await client.manager.streams.add({ name: 'PUBACK', subjects: ['puback.>'], storage: StorageType.File, duplicate_window: 60_000_000_000 });
  await client.manager.streams.add({
    name: 'PUBACK_FULL',
    subjects: ['full.>'],
    storage: StorageType.File,
    max_msgs: 1,
    discard: DiscardPolicy.New,
  });
});

afterAll(async () => {
  await client?.drain();
  await nats?.stop();
});

it('resolves to the PubAck with the stream and its sequence', async () => {
  const first = await client.pubAcks.publish('puback.a', data(1), { msgID: 'ack-1', timeout: 2000 });
  const second = await client.pubAcks.publish('puback.b', data(2), { msgID: 'ack-2', timeout: 2000 });
  expect(first).toEqual({ stream: 'PUBACK', seq: expect.any(Number), duplicate: false });
  expect(second).toEqual({ stream: 'PUBACK', seq: first.seq + 1, duplicate: false });
  const stored = await client.manager.streams.getMessage('PUBACK', { seq: second.seq });
  expect(stored?.subject).toBe('puback.b');
  expect(stored?.header.get('Nats-Msg-Id')).toBe('ack-2');
  expect(stored?.json()).toEqual({ n: 2 });
});

it('says duplicate for a repeat of a Nats-Msg-Id within the duplicate window, and stores it once', async () => {
  const first = await client.pubAcks.publish('puback.dup', data(1), { msgID: 'dup-1', timeout: 2000 });
  const repeat = await client.pubAcks.publish('puback.dup', data(1), { msgID: 'dup-1', timeout: 2000 });
  expect(first.duplicate).toBe(false);
  expect(repeat).toEqual({ stream: 'PUBACK', seq: first.seq, duplicate: true });
  expect((await client.manager.streams.info('PUBACK', { subjects_filter: 'puback.dup' })).state.subjects).toEqual({ 'puback.dup': 1 });
});

it('rejects with no responders when no stream takes the subject', async () => {
  await expect(client.pubAcks.publish('nostream.x', data(1), { msgID: 'none-1', timeout: 2000 })).rejects.toBeInstanceOf(NoRespondersError);
  expect(client.pubAcks.inflight).toBe(0);
});

it("rejects with the server's description when JetStream refuses the message (full stream, discard new)", async () => {
  await client.pubAcks.publish('full.a', data(1), { msgID: 'full-1', timeout: 2000 });
  const refused = client.pubAcks.publish('full.a', data(2), { msgID: 'full-2', timeout: 2000 });
  await expect(refused).rejects.toBeInstanceOf(JetStreamApiError);
  await expect(refused).rejects.toThrow(/maximum messages exceeded/);
});

it('rejects on timeout, and ignores the PubAck that comes after it', async () => {
  // A frozen server answers nothing; thawed, it stores the message and sends the late PubAck.
  await nats.freeze();
  let outcome: Promise<unknown>;
  try {
    outcome = client.pubAcks.publish('puback.late', data(1), { msgID: 'late-1', timeout: 300 });
    await expect(outcome).rejects.toBeInstanceOf(TimeoutError);
    expect(client.pubAcks.inflight).toBe(0);
  } finally {
    nats.signal('SIGCONT');
  }
  // The late PubAck arrives and is dropped: the message is stored, and publishing goes on.
  await client.connection.flush();
  const after = await client.pubAcks.publish('puback.late', data(2), { msgID: 'late-2', timeout: 5000 });
  expect(after.duplicate).toBe(false);
  expect((await client.manager.streams.info('PUBACK', { subjects_filter: 'puback.late' })).state.subjects).toEqual({ 'puback.late': 2 });
  // The timed-out message made it: its repeat is a duplicate.
  expect((await client.pubAcks.publish('puback.late', data(1), { msgID: 'late-1', timeout: 2000 })).duplicate).toBe(true);
});

it('resolves many concurrent publishes each to its own PubAck', async () => {
  const count = 500;
  const acks = await Promise.all(
    Array.from({ length: count }, (_, i) => client.pubAcks.publish(`puback.many.${i}`, data(i), { msgID: `many-${i}`, timeout: 5000 })),
  );
  expect(new Set(acks.map((ack) => ack.seq)).size).toBe(count);
  for (let i = 0; i < count; i += 97) {
    const stored = await client.manager.streams.getMessage('PUBACK', { seq: acks[i].seq });
    expect(stored?.subject).toBe(`puback.many.${i}`);
    expect(stored?.header.get('Nats-Msg-Id')).toBe(`many-${i}`);
  }
});

it('keeps publishing after NATS restarts (the reply subscription is made again)', async () => {
  const before = await client.pubAcks.publish('puback.restart', data(1), { msgID: 'restart-1', timeout: 2000 });
  await nats.restart();
  let after: Awaited<ReturnType<PubAckPublisher['publish']>> | undefined;
  for (let i = 0; i < 50 && !after; i++) {
    after = await client.pubAcks.publish('puback.restart', data(2), { msgID: 'restart-2', timeout: 1000 }).catch(() => undefined);
    if (!after) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(after).toEqual({ stream: 'PUBACK', seq: expect.any(Number), duplicate: false });
  expect(after!.seq).toBeGreaterThan(before.seq);
});

it('rejects the publishes waiting for their PubAck when the connection closes', async () => {
  const own = await NatsClient.connect({ servers: [nats.url], name: 'pub-ack-publisher-close' });
  await nats.freeze();
  try {
    const waiting = own.pubAcks.publish('puback.closed', data(1), { msgID: 'closed-1', timeout: 60_000 });
    await own.connection.close();
    await expect(waiting).rejects.toBeInstanceOf(ClosedConnectionError);
    expect(own.pubAcks.inflight).toBe(0);
    await expect(own.pubAcks.publish('puback.closed', data(2), { msgID: 'closed-2', timeout: 1000 })).rejects.toBeInstanceOf(ClosedConnectionError);
  } finally {
    nats.signal('SIGCONT');
  }
});

it("gets its PubAcks on the user's own inbox prefix under deploy/nats/users.conf", async () => {
  const secured = await startSecuredNats();
  const clients: NatsClient[] = [];
  try {
    const owner = await NatsClient.connect({ servers: [secured.url], name: 'reporting-projection', identity: secured.credentials('reporting-projection') });
    clients.push(owner);
    await ensureStreams(owner.manager);
    // The gateway may subscribe to _INBOX_gateway.> only: the reply subscription must be under it.
    const gateway = await NatsClient.connect({ servers: [secured.url], name: 'gateway', identity: secured.credentials('gateway') });
    clients.push(gateway);
    const ack = await gateway.pubAcks.publish('events.recommendation.shown', data(1), { msgID: 'secured-1', timeout: 2000 });
    expect(ack).toEqual({ stream: Streams.events, seq: expect.any(Number), duplicate: false });
  } finally {
    for (const c of clients) await c.drain();
    await secured.stop();
  }
});
