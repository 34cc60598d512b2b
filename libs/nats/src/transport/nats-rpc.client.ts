import { ClientProxy, NatsRecord, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { REQUEST_ID_HEADER, type RpcErrorCode } from '#libs/contracts';
import { histogram } from '#libs/observability';
import { RawJson, decodeReply, encodeRequest } from './rpc-wire.js';

const requestSeconds = histogram('weave_rpc_request_seconds', 'NATS request/reply round trips', ['subject', 'outcome']);

/**
 * A request that did not get a result: the service answered a typed error (`answered`), or
 * nobody answered in time / nobody listens on the subject (`code` unavailable, not answered).
 * The gateway's exception filter turns it into a problem.
 */
export class RpcCallError extends Error {
  constructor(
    readonly subject: string,
    readonly code: RpcErrorCode,
    message: string,
    readonly answered: boolean,
  ) {
    super(message);
    this.name = 'RpcCallError';
  }
}

export interface NatsRpcClientOptions {
  /** The process's NATS connection (NatsClient.connection); the client never closes it. */
  connection: NatsConnection;
  /** How long a request waits for its reply, unless its record names its own timeout. */
  timeoutMs: number;
  /** Results come back as RawJson (unparsed bytes, copied) instead of parsed values. */
  rawResults?: boolean;
}

/**
 * A request's payload with its NATS headers and, when the call has a deadline of its own (POST
 * /agent/recommend waits for the caller's latency budget), the timeout of this one request in
 * place of the client's.
 */
export class NatsRpcRecord<T = unknown> extends NatsRecord<T, MsgHdrs | undefined> {
  constructor(
    data: T,
    headers: MsgHdrs | undefined,
    readonly timeoutMs?: number,
  ) {
    super(data, headers);
  }
}

/**
 * The payload of a request with its request id (header `X-Request-Id`) and optionally its own
 * timeout, as `client.send(subject, withRequestId(payload, id, { timeoutMs }))`.
 */
export function withRequestId<T>(payload: T, requestId: string | undefined, options: { timeoutMs?: number } = {}): NatsRpcRecord<T> {
  let headers: MsgHdrs | undefined;
  if (requestId) {
    headers = natsHeaders();
    headers.set(REQUEST_ID_HEADER, requestId);
  }
  return new NatsRpcRecord(payload, headers, options.timeoutMs);
}

/**
 * The client side of our Nest NATS transport, used through `ClientsModule` as a `ClientProxy`
 * (`client.send(subject, payload)`). Nest's ClientNats subscribes to a new inbox for every
 * request; this client uses the connection's request multiplexer instead (one wildcard inbox
 * subscription for all requests), measured at a third more requests per second through the
 * gateway (docs/benchmarks.md). Replies are in the wire format of rpc-wire.ts. "No responders"
 * (NATS answers at once when nobody listens) and timeouts reject with an RpcCallError. A request
 * waits `timeoutMs`, or the timeout its NatsRpcRecord carries.
 *
 * Requests are sent together once per turn of the event loop (setImmediate): the NATS client
 * writes its buffer to the socket at the end of each task, and every HTTP request arrives in a
 * task of its own, so a request each was a socket write each — a fifth of the gateway's CPU under
 * load (docs/benchmarks.md). Requests made while the loop handles one batch of ready sockets now
 * share one write; each waits at most until the end of that turn.
 */
export class NatsRpcClient extends ClientProxy {
  /** Requests made in this turn of the event loop, sent together at its end. */
  private queued: (() => void)[] = [];

  constructor(private readonly options: NatsRpcClientOptions) {
    super();
  }

  async connect(): Promise<NatsConnection> {
    return this.options.connection;
  }

  async close(): Promise<void> {
    // The connection belongs to NatsClient, which drains it at shutdown.
  }

  unwrap<T>(): T {
    return this.options.connection as T;
  }

  /**
   * As ClientProxy.send, without its connect step (a deferred promise per request): the
   * connection is the process's and already open. About 2 µs less per request.
   */
  override send<TResult = unknown, TInput = unknown>(pattern: unknown, data: TInput): Observable<TResult> {
    if (pattern === null || pattern === undefined || data === null || data === undefined) return super.send(pattern, data);
    return new Observable<TResult>((observer) => this.publish(this.createPacket(pattern, data), this.createObserver(observer)));
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    const subject = this.normalizePattern(packet.pattern);
    const record = packet.data instanceof NatsRecord ? (packet.data as NatsRecord<unknown, MsgHdrs | undefined>) : undefined;
    const end = requestSeconds.startTimer({ subject });
    let data: Uint8Array;
    try {
      data = encodeRequest(record ? record.data : packet.data);
    } catch (error) {
      end({ outcome: 'invalid_request' });
      callback({ err: new RpcCallError(subject, 'invalid_request', (error as Error).message, false) });
      return () => undefined;
    }
    const timeout = record instanceof NatsRpcRecord && record.timeoutMs !== undefined ? record.timeoutMs : this.options.timeoutMs;
    this.enqueue(() => this.request(subject, data, timeout, record?.headers, end, callback));
    // A NATS request cannot be withdrawn; its reply (or timeout) is simply not observed.
    return () => undefined;
  }

  private enqueue(send: () => void): void {
    this.queued.push(send);
    if (this.queued.length > 1) return;
    setImmediate(() => {
      const batch = this.queued;
      this.queued = [];
      for (const request of batch) request();
    });
  }

  private request(
    subject: string,
    data: Uint8Array,
    timeout: number,
    headers: MsgHdrs | undefined,
    end: (labels: { outcome: string }) => void,
    callback: (packet: WritePacket) => void,
  ): void {
    let sent: Promise<Msg>;
    try {
      sent = this.options.connection.request(subject, data, { timeout, headers });
    } catch (error) {
      end({ outcome: 'unavailable' });
      callback({ err: new RpcCallError(subject, 'unavailable', `${subject} did not answer: ${(error as Error).message}`, false) });
      return;
    }
    sent.then(
      (msg) => {
        let reply;
        try {
          reply = decodeReply(msg.data, this.options.rawResults);
        } catch (error) {
          end({ outcome: 'unavailable' });
          callback({ err: new RpcCallError(subject, 'unavailable', (error as Error).message, false) });
          return;
        }
        if (reply.ok) {
          end({ outcome: 'ok' });
          // A raw result is a view into the message's buffer: a copy, since the caller may keep it.
          const response = reply.result instanceof RawJson ? new RawJson(Buffer.from(reply.result.bytes)) : reply.result;
          callback({ response, isDisposed: true });
        } else {
          end({ outcome: reply.error.code });
          callback({ err: new RpcCallError(subject, reply.error.code, reply.error.message, true) });
        }
      },
      (error: Error) => {
        end({ outcome: 'unavailable' });
        callback({ err: new RpcCallError(subject, 'unavailable', `${subject} did not answer: ${error.message}`, false) });
      },
    );
  }

  protected async dispatchEvent<T = undefined>(packet: ReadPacket): Promise<T> {
    const subject = this.normalizePattern(packet.pattern);
    const record = packet.data instanceof NatsRecord ? (packet.data as NatsRecord<unknown, MsgHdrs | undefined>) : undefined;
    this.options.connection.publish(subject, encodeRequest(record ? record.data : packet.data), { headers: record?.headers });
    return undefined as T;
  }
}
