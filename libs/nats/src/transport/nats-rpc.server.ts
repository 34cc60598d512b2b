import type { CustomTransportStrategy, MessageHandler } from '@nestjs/microservices';
import { NatsContext, Server } from '@nestjs/microservices';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { histogram, type Logger } from '#libs/observability';
import { decodeRequest, encodeError, encodeResult, toRpcError } from './rpc-wire.js';

const handlerSeconds = histogram('weave_rpc_handler_seconds', 'Time to answer a NATS request', ['subject', 'outcome']);

export interface NatsRpcServerOptions {
  /** The queue group shared by the service's replicas. */
  queue: string;
  logger: Logger;
  /** How long close() waits for requests in flight to be answered. */
  drainTimeoutMs?: number;
}

/**
 * The request/reply side of our Nest NATS transport: every `@MessagePattern(subject)` handler
 * of the service is subscribed in the service's queue group, on the process's one NATS
 * connection (the one JetStream uses too; Nest's ServerNats would open a second), and answered
 * in the wire format of rpc-wire.ts. Handlers run through Nest's pipes, filters and
 * interceptors as with any transport (`handleRequest` of the base Server).
 *
 * close() (Nest calls it when the application shuts down) stops taking requests and waits for
 * those in flight to be answered; the connection itself is drained afterwards by the
 * infrastructure, after the other components stopped.
 */
export class NatsRpcServer extends Server implements CustomTransportStrategy {
  private subscriptions: Subscription[] = [];
  private inFlight = 0;
  private idle?: () => void;

  constructor(
    private readonly connection: NatsConnection,
    private readonly options: NatsRpcServerOptions,
  ) {
    super();
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      for (const subject of this.messageHandlers.keys()) {
        const handler = this.messageHandlers.get(subject)!;
        if (handler.isEventHandler) throw new Error(`${subject}: event handlers are not served by NatsRpcServer (use JetStream consumers)`);
        this.subscriptions.push(
          this.connection.subscribe(subject, {
            queue: this.options.queue,
            callback: (error, msg) => {
              if (error) this.options.logger.error({ err: error, subject }, 'subscription error');
              else void this.answer(subject, handler, msg);
            },
          }),
        );
      }
      // Listening means the server knows the subscriptions: a request sent after start-up
      // finds a responder.
      await this.connection.flush();
      callback();
    } catch (error) {
      callback(error);
    }
  }

  async close(): Promise<void> {
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.options.drainTimeoutMs ?? 5000);
      this.idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  on(): void {
    // Connection status is logged by NatsClient, which owns the connection.
  }

  unwrap<T>(): T {
    return this.connection as T;
  }

  private async answer(subject: string, handler: MessageHandler, msg: Msg): Promise<void> {
    const end = handlerSeconds.startTimer({ subject });
    const request = decodeRequest(msg.data);
    if (!request.ok) {
      msg.respond(encodeError({ code: 'invalid_request', message: 'request is not JSON' }));
      end({ outcome: 'invalid_request' });
      return;
    }
    this.inFlight++;
    let answered = false;
    // The first value (or error) of the handler's stream is the reply; later packets of the
    // same stream (its completion) are ignored.
    const respond = (packet: { response?: unknown; err?: unknown; isDisposed?: boolean }) => {
      if (answered) return;
      if (packet.err !== undefined) {
        const error = toRpcError(packet.err);
        msg.respond(encodeError(error));
        end({ outcome: error.code });
      } else if ('response' in packet || packet.isDisposed) {
        msg.respond(encodeResult(packet.response));
        end({ outcome: 'ok' });
      } else {
        return;
      }
      answered = true;
      this.settled();
    };
    try {
      const context = new NatsContext([msg.subject, msg.headers]);
      await this.handleRequest(context, async () => this.transformToObservable(await handler(request.payload, context)), respond);
    } catch (error) {
      // Pipes and filters turn a handler's failure into an error packet; this is a failure of
      // the transport itself. Answer anyway, so that the caller does not wait for its timeout.
      this.options.logger.error({ err: error, subject }, 'request handling failed');
      respond({ err: error });
    }
  }

  private settled(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.idle) {
      this.idle();
      this.idle = undefined;
    }
  }
}
