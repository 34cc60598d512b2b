import { headers as natsHeaders, connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { waitFor } from './servers.js';

/** The wire shape producers publish (DESIGN §4), tagged with where it goes. */
export type WireEvent =
  | { subject: `events.recommendation.${string}`; id: string; payload: Record<string, unknown> }
  | { subject: 'events.accounting.entry' | 'events.accounting.reconciled' | string; id: string; payload: unknown };

export interface Producer {
  connection: NatsConnection;
  js: JetStreamClient;
  publish(event: WireEvent): Promise<number>;
  publishRaw(subject: string, data: Uint8Array | string, msgId?: string): Promise<number>;
  close(): Promise<void>;
}

/** An internal producer as DESIGN §4 describes it: JSON, Nats-Msg-Id set to the event id. */
export async function connectProducer(url: string, credentials?: { user: string; pass: string }): Promise<Producer> {
  const connection = await connect({ servers: url, ...credentials });
  const js = jetstream(connection);
  const encoder = new TextEncoder();
  const publishRaw = async (subject: string, data: Uint8Array | string, msgId?: string) => {
    const h = natsHeaders();
    const ack = await js.publish(subject, typeof data === 'string' ? encoder.encode(data) : data, msgId ? { msgID: msgId, headers: h } : {});
    return ack.seq;
  };
  return {
    connection,
    js,
    publishRaw,
    publish: (event) => publishRaw(event.subject, JSON.stringify(event.payload), event.id),
    close: () => connection.drain(),
  };
}

/** Creates the streams as a service would at start, for tests that publish before any service runs. */
export async function prepareStreams(url: string): Promise<void> {
  const { NatsClient, ensureStreams } = await import('#libs/nats');
  const client = await NatsClient.connect({ servers: [url], name: 'test-setup' });
  await ensureStreams(client.manager);
  await client.drain();
}

/**
 * Waits until a durable consumer has nothing pending or unacknowledged (and, with `delivered`,
 * has been delivered at least up to that stream sequence): the service has applied what was
 * published before.
 */
export async function waitForConsumer(
  on: { connection: NatsConnection },
  stream: string,
  durable: string,
  options: { delivered?: number; what?: string; timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const manager = await jetstreamManager(on.connection);
  await waitFor(
    async () => {
      const info = await manager.consumers.info(stream, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq >= (options.delivered ?? 0);
    },
    { what: options.what ?? `${durable} caught up`, timeoutMs: options.timeoutMs, intervalMs: options.intervalMs },
  );
}

/** A message as a stream stores it: its Nats-Msg-Id, subject and JSON payload. */
export interface StoredEvent {
  msgId: string | undefined;
  subject: string;
  payload: Record<string, unknown>;
}

/** Every message a stream holds now, oldest first (sequences already deleted are skipped). */
export async function storedEvents(manager: JetStreamManager, stream: string): Promise<StoredEvent[]> {
  const info = await manager.streams.info(stream);
  const events: StoredEvent[] = [];
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const message = await manager.streams.getMessage(stream, { seq }).catch(() => null);
    if (!message) continue;
    events.push({ msgId: message.header?.get('Nats-Msg-Id'), subject: message.subject, payload: message.json<Record<string, unknown>>() });
  }
  return events;
}
