import { headers as natsHeaders } from '@nats-io/transport-node';
import type { JetStreamClient } from '@nats-io/jetstream';
import { DeadLetterHeaders, deadLetterSubject } from '#libs/contracts';
import { counter } from '#libs/observability';

/** Why a message was dead-lettered: the `cause` label of weave_dead_letters_total. */
export type DeadLetterCause = 'invalid' | 'conflict' | 'past_restatement_window' | 'retries_exhausted';

export interface DeadLetter {
  subject: string;
  data: Uint8Array;
  stream: string;
  sequence: number;
  deliveries: number;
  reason: string;
}

const deadLettersTotal = counter('weave_dead_letters_total', 'Messages copied to DEAD_LETTERS', ['subject', 'cause']);

/** Header values are single-line ASCII; reasons come from validators and may be long. */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, ' ').slice(0, 1000);
}

/**
 * Copies a message to DEAD_LETTERS with the reason in a header. The message id makes a repeat
 * (after a crash between this publish and the ack) a no-op within the duplicate window.
 */
export async function publishDeadLetter(
  js: JetStreamClient,
  letter: DeadLetter,
  cause: DeadLetterCause,
): Promise<void> {
  const h = natsHeaders();
  h.set(DeadLetterHeaders.reason, headerSafe(letter.reason));
  h.set(DeadLetterHeaders.originalSubject, letter.subject);
  h.set(DeadLetterHeaders.originalStream, letter.stream);
  h.set(DeadLetterHeaders.originalSequence, String(letter.sequence));
  h.set(DeadLetterHeaders.deliveries, String(letter.deliveries));
  await js.publish(deadLetterSubject(letter.subject), letter.data, {
    headers: h,
    msgID: `dl:${letter.stream}:${letter.sequence}`,
  });
  deadLettersTotal.inc({ subject: letter.subject, cause });
}
