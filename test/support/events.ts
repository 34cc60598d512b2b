import { headers as natsHeaders, connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';

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
