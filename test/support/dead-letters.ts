import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { DeadLetterHeaders, Streams } from '#libs/contracts';

/** A message of DEAD_LETTERS as the services write it (DESIGN §4): where it came from and why. */
export interface DeadLetter {
  subject: string;
  reason: string;
  deliveries: number;
  originalSequence: number;
  data: string;
}

/**
 * Up to `max` messages of DEAD_LETTERS after stream sequence `since` (all of them by default),
 * read with an ordered consumer: nothing is acknowledged or removed. Stops early when a fetch
 * brings nothing within two seconds.
 */
export async function readDeadLetters(connection: NatsConnection, { max, since = 0 }: { max: number; since?: number }): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  if (max === 0) return letters;
  const consumer = await jetstream(connection).consumers.get(Streams.deadLetters, since > 0 ? { opt_start_seq: since + 1 } : {});
  while (letters.length < max) {
    let received = 0;
    for await (const m of await consumer.fetch({ max_messages: max - letters.length, expires: 2000 })) {
      received++;
      letters.push({
        subject: m.subject,
        reason: m.headers?.get(DeadLetterHeaders.reason) ?? '',
        deliveries: Number(m.headers?.get(DeadLetterHeaders.deliveries)),
        originalSequence: Number(m.headers?.get(DeadLetterHeaders.originalSequence)),
        data: m.string(),
      });
    }
    if (received === 0) break;
  }
  return letters;
}

/** Asserts the letters, in the order of their original stream sequences, are these subjects for these reasons. */
export function expectDeadLetters(letters: DeadLetter[], expected: [subject: string, reason: RegExp][]): DeadLetter[] {
  const ordered = [...letters].sort((a, b) => a.originalSequence - b.originalSequence);
  expect(ordered.map((l) => l.subject)).toEqual(expected.map(([subject]) => subject));
  expected.forEach(([, reason], i) => expect(ordered[i].reason).toMatch(reason));
  return ordered;
}
