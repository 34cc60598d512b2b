import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { ReplyInbox, type ReplyOutcome } from './reply-inbox.js';

const decoder = new TextDecoder();

/** What JetStream acknowledged: the stream that stored the message, and whether it was a duplicate of one stored within the duplicate window. */
export interface PubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * JetStream publication on the request path, one PubAck per message: what
 * `JetStreamClient.publish(subject, data, { msgID, timeout })` does — a core NATS publish with a
 * reply subject and a `Nats-Msg-Id` header, answered by the stream with a PubAck (JSON) — over
 * one ReplyInbox, without the client's per-message promises and its unobserved
 * `RequestError("cancelled")` (a stack trace) per acknowledged message. Rejects, like the client,
 * when no stream answers in time, when none listens on the subject (no responders), or when
 * the stream answers an error.
 *
 * Only for single publishes that need nothing else of the client (no expectations, no retries):
 * a tracking link's event. Everything else publishes through the JetStream client.
 */
export class JetStreamPublisher {
  private readonly inbox: ReplyInbox;

  constructor(connection: NatsConnection, inboxPrefix?: string) {
    this.inbox = new ReplyInbox(connection, inboxPrefix);
  }

  publish(subject: string, data: Uint8Array, options: { msgID: string; timeout: number }): Promise<PubAck> {
    const headers = natsHeaders();
    headers.set('Nats-Msg-Id', options.msgID);
    return new Promise<PubAck>((resolve, reject) => {
      const settle = (outcome: ReplyOutcome) => {
        if ('error' in outcome) {
          reject(new Error(`JetStream did not acknowledge ${subject}: ${outcome.error}`));
          return;
        }
        let ack: { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { description?: string; code?: number } };
        try {
          ack = JSON.parse(decoder.decode(outcome.msg.data)) as typeof ack;
        } catch {
          reject(new Error(`JetStream answered ${subject} with something that is not a PubAck`));
          return;
        }
        if (ack.error) reject(new Error(`JetStream refused ${subject}: ${ack.error.description ?? 'error'} (${ack.error.code ?? 'no code'})`));
        else if (typeof ack.stream !== 'string' || ack.stream === '') reject(new Error(`JetStream answered ${subject} with an invalid PubAck`));
        else resolve({ stream: ack.stream, seq: Number(ack.seq), duplicate: ack.duplicate === true });
      };
      try {
        this.inbox.request(subject, data, headers, options.timeout, settle);
      } catch (error) {
        reject(error as Error);
      }
    });
  }
}
