import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsIdentity, NatsTls } from '#libs/config';
import type { Logger } from '#libs/observability';
import { natsAuthOptions } from '#libs/nats-auth';
import { PubAckPublisher } from './pub-ack-publisher.js';

/** One NATS connection per process, with its JetStream client and manager. */
export class NatsClient {
  private publisher?: PubAckPublisher;

  private constructor(
    readonly connection: NatsConnection,
    readonly jetstream: JetStreamClient,
    readonly manager: JetStreamManager,
    private readonly inboxPrefix: string | undefined,
  ) {}

  /**
   * JetStream publishes with a PubAck through one reply subscription of this connection, made on
   * the first publish: half the CPU of `jetstream.publish` per message (see PubAckPublisher).
   */
  get pubAcks(): PubAckPublisher {
    this.publisher ??= new PubAckPublisher(this.connection, this.inboxPrefix);
    return this.publisher;
  }

  /**
   * `identity`: the process's NATS user (DESIGN §8); without it the connection is anonymous.
   * `tls`: TLS with the server's certificate verified against that CA (NATS_TLS_*); without it plain.
   */
  static async connect(options: { servers: string[]; name: string; logger?: Logger; identity?: NatsIdentity; tls?: NatsTls }): Promise<NatsClient> {
    const auth = await natsAuthOptions(options.identity, options.name);
    const connection = await connect({
      servers: options.servers,
      name: options.name,
      ...auth,
      ...(options.tls ? { tls: options.tls } : {}),
      // A service outlives NATS restarts: it reconnects for as long as it runs.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      pingInterval: 10000,
      // The client otherwise builds two Error objects with stack traces for every request and
      // publish ack, about a fifth of the gateway's CPU under load (bench/read); timeouts and
      // no-responders still come back as typed errors, only without the caller's stack.
      noAsyncTraces: true,
    });
    if (options.logger) {
      const logger = options.logger;
      void (async () => {
        for await (const status of connection.status()) {
          if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error') {
            logger.warn({ nats: status.type }, `NATS ${status.type}`);
          }
        }
      })();
    }
    const manager = await jetstreamManager(connection);
    return new NatsClient(connection, jetstream(connection), manager, auth.inboxPrefix);
  }

  async ping(): Promise<void> {
    if (this.connection.isClosed()) throw new Error('NATS connection closed');
    await this.connection.flush();
  }

  /** Drain: finish in-flight subscriptions and publishes, then close. */
  async drain(): Promise<void> {
    if (this.connection.isClosed() || this.connection.isDraining()) return;
    try {
      await this.connection.drain();
    } catch {
      await this.connection.close();
    }
  }
}
