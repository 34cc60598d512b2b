import type { JetStreamClient } from '@nats-io/jetstream';
import type { DemoMessage } from '../week/week-plan.js';

export interface PublishOutcome {
  /** Messages sent. */
  published: number;
  /** Of those, stored as new by the stream. */
  stored: number;
  /** Of those, recognized by the stream as already stored (same Nats-Msg-Id within its window). */
  duplicates: number;
  /** Where the last message of the list is stored (its first copy, for a duplicate). */
  last?: { stream: string; sequence: number; id: string };
}

/**
 * Publishes on JetStream as an internal producer does (DESIGN §4): JSON, header Nats-Msg-Id =
 * the event's id, each publish acknowledged by the stream. Up to `inFlight` wait for their ack
 * at once, so a week of events takes seconds, not minutes.
 */
export async function publishAll(
  jetstream: JetStreamClient,
  messages: readonly DemoMessage[],
  onProgress: (done: number) => void,
  inFlight = 256,
): Promise<PublishOutcome> {
  const outcome: PublishOutcome = { published: 0, stored: 0, duplicates: 0 };
  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const index = next++;
      const message = messages[index];
      const ack = await jetstream.publish(message.subject, JSON.stringify(message.payload), { msgID: message.id, timeout: 10000 });
      if (index === messages.length - 1) outcome.last = { stream: ack.stream, sequence: ack.seq, id: message.id };
      outcome.published += 1;
      if (ack.duplicate) outcome.duplicates += 1;
      else outcome.stored += 1;
      onProgress(outcome.published);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, messages.length) }, worker));
  return outcome;
}
