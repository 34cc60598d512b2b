import { headers as natsHeaders } from '@nats-io/transport-node';
import { DeadLetterHeaders, Streams } from '#libs/contracts';
import type { NatsClient } from '#libs/nats';

/** One dead letter as the ops CLI shows it. */
export interface DeadLetterView {
  sequence: number;
  original_subject: string;
  original_stream: string | null;
  original_sequence: number | null;
  deliveries: number | null;
  reason: string;
  stored_at: string;
  payload: string;
}

const MAX_PAYLOAD_SHOWN = 2000;
const decoder = new TextDecoder();

export class DeadLetterError extends Error {}

async function read(nats: NatsClient, sequence: number) {
  try {
    return await nats.manager.streams.getMessage(Streams.deadLetters, { seq: sequence });
  } catch {
    return null;
  }
}

function view(message: NonNullable<Awaited<ReturnType<typeof read>>>): DeadLetterView {
  const header = (name: string) => message.header?.get(name) || null;
  const number = (name: string) => (header(name) === null ? null : Number(header(name)));
  const payload = decoder.decode(message.data);
  return {
    sequence: message.seq,
    original_subject: header(DeadLetterHeaders.originalSubject) ?? message.subject.replace(/^deadletter\./, ''),
    original_stream: header(DeadLetterHeaders.originalStream),
    original_sequence: number(DeadLetterHeaders.originalSequence),
    deliveries: number(DeadLetterHeaders.deliveries),
    reason: header(DeadLetterHeaders.reason) ?? '',
    stored_at: message.time.toISOString(),
    payload: payload.length > MAX_PAYLOAD_SHOWN ? `${payload.slice(0, MAX_PAYLOAD_SHOWN)}…` : payload,
  };
}

/** The oldest dead letters (optionally of one original subject), at most `limit`. */
export async function listDeadLetters(nats: NatsClient, options: { limit: number; subject?: string }) {
  const info = await nats.manager.streams.info(Streams.deadLetters);
  const letters: DeadLetterView[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && letters.length < options.limit; seq++) {
    const message = await read(nats, seq);
    if (!message) continue;
    const letter = view(message);
    if (!options.subject || letter.original_subject === options.subject) letters.push(letter);
  }
  return { dead_letters: letters, stored: info.state.messages };
}

/**
 * Publishes a dead letter's payload again on its original subject (so its stream and consumers
 * take it as a new event: the projections are idempotent) and removes it from DEAD_LETTERS.
 * The message id `redrive:<sequence>` makes a repeated re-drive within the duplicate window a
 * no-op; a dead letter already removed is reported as not found.
 */
export async function redriveDeadLetter(nats: NatsClient, sequence: number) {
  const message = await read(nats, sequence);
  if (!message) throw new DeadLetterError(`no dead letter with sequence ${sequence}`);
  const letter = view(message);
  const h = natsHeaders();
  h.set('Redriven-From', `${Streams.deadLetters}:${sequence}`);
  let ack;
  try {
    ack = await nats.jetstream.publish(letter.original_subject, message.data, { msgID: `redrive:${sequence}`, headers: h });
  } catch (error) {
    if (!/permissions violation/i.test((error as Error).message)) throw error;
    // DESIGN §8: accounting and payout events are the producer's alone; the letter stays.
    throw new DeadLetterError(
      `this NATS user may not publish ${letter.original_subject}; the dead letter is kept (docs/operations.md: re-driving producer events)`,
    );
  }
  await nats.manager.streams.deleteMessage(Streams.deadLetters, sequence);
  return { sequence, original_subject: letter.original_subject, stream: ack.stream, stream_sequence: ack.seq, duplicate: ack.duplicate };
}
