import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamManager } from '@nats-io/jetstream';
import { DeadLetterHeaders, Streams } from '#libs/contracts';

// What the services dead-lettered, read without consuming it.

export interface DeadLetterSeen {
  subject: string;
  reason: string;
  deliveries: number;
  originalSequence: number;
  data: string;
}

/** Everything in DEAD_LETTERS, read with an ordered consumer (nothing is acked or removed). */
export async function deadLetters(connection: NatsConnection, manager: JetStreamManager): Promise<DeadLetterSeen[]> {
  const info = await manager.streams.info(Streams.deadLetters);
  if (info.state.messages === 0) return [];
  const consumer = await jetstream(connection).consumers.get(Streams.deadLetters);
  const letters: DeadLetterSeen[] = [];
  const messages = await consumer.fetch({ max_messages: info.state.messages, expires: 5000 });
  for await (const m of messages) {
    letters.push({
      subject: m.subject,
      reason: m.headers?.get(DeadLetterHeaders.reason) ?? '',
      deliveries: Number(m.headers?.get(DeadLetterHeaders.deliveries)),
      originalSequence: Number(m.headers?.get(DeadLetterHeaders.originalSequence)),
      data: m.string(),
    });
    if (letters.length >= info.state.messages) break;
  }
  return letters;
}
