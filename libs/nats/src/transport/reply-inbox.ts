import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** How a request ended: its reply, or why there is none (`timeout`, `no responders`, a connection or subscription failure). */
export type ReplyOutcome = { msg: Msg } | { error: string };

interface Pending {
  settle: (outcome: ReplyOutcome) => void;
  timer: NodeJS.Timeout;
}

/**
 * Request/reply over one wildcard reply subscription (`<inbox prefix>.<nuid>.*`), replies matched
 * to their requests by the last token of the reply subject: what the NATS client's own request
 * multiplexer does, without its per-request machinery. `NatsConnection.request` builds, for every
 * request, a deferred promise, a timeout promise and a `Promise.race` of the two, and on
 * completion a `RequestError("cancelled")` with its stack trace, which nobody observes; here a
 * request is a map entry and a timer, and its outcome a callback.
 *
 * What the caller sees stays the same: the reply, or at once "no responders" (the server's 503
 * status when nobody listens on the subject), or a timeout after `timeoutMs`, or the connection's
 * close. The subscription is made on first use; NATS restores it after a reconnect like any
 * other, and a subscription that fails (a permission error) fails the requests waiting on it and
 * is made again by the next request.
 */
export class ReplyInbox {
  private subscription?: Subscription;
  private prefix = '';
  private next = 0;
  private readonly pending = new Map<string, Pending>();

  /** `inboxPrefix`: the connection's (a NATS user may subscribe only under `_INBOX_<user>`); by default the connection's option. */
  constructor(
    private readonly connection: NatsConnection,
    private readonly inboxPrefix?: string,
  ) {}

  /** Publishes `data` to `subject` with a reply subject of this inbox; `settle` is called once. Throws when the connection is closed. */
  request(subject: string, data: Uint8Array, headers: MsgHdrs | undefined, timeoutMs: number, settle: (outcome: ReplyOutcome) => void): void {
    const prefix = this.open();
    const token = (this.next++).toString(36);
    const timer = setTimeout(() => this.finish(token, { error: 'timeout' }), timeoutMs);
    this.pending.set(token, { settle, timer });
    try {
      this.connection.publish(subject, data, { reply: prefix + token, headers });
    } catch (error) {
      this.finish(token, { error: (error as Error).message });
    }
  }

  /** Requests waiting for a reply (for tests and metrics). */
  get waiting(): number {
    return this.pending.size;
  }

  private open(): string {
    if (this.subscription && !this.subscription.isClosed()) return this.prefix;
    if (this.connection.isClosed()) throw new Error('connection closed');
    const inboxPrefix = this.inboxPrefix ?? (this.connection as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    const prefix = `${createInbox(inboxPrefix)}.`;
    const subscription = this.connection.subscribe(`${prefix}*`, {
      callback: (error, msg) => {
        if (error) {
          this.failAll(error.message);
          return;
        }
        const token = msg.subject.slice(prefix.length);
        // A 503 status without data: nobody listens on the subject (the server answers at once).
        if (msg.data.length === 0 && msg.headers?.code === 503) this.finish(token, { error: 'no responders' });
        else this.finish(token, { msg });
      },
    });
    this.subscription = subscription;
    this.prefix = prefix;
    // Closed (the connection closed, or drained at shutdown): whoever still waits will get no reply.
    void subscription.closed.then((error) => this.closed(subscription, error instanceof Error ? error.message : 'connection closed'));
    return prefix;
  }

  private closed(subscription: Subscription, reason: string): void {
    if (this.subscription !== subscription) return;
    this.subscription = undefined;
    this.failAll(reason);
  }

  private finish(token: string, outcome: ReplyOutcome): void {
    const request = this.pending.get(token);
    if (!request) return; // late, after its timeout
    this.pending.delete(token);
    clearTimeout(request.timer);
    request.settle(outcome);
  }

  private failAll(reason: string): void {
    for (const token of [...this.pending.keys()]) this.finish(token, { error: reason });
  }
}
