import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamManager } from '@nats-io/jetstream';
import { Streams } from '#libs/contracts';
import { readDeadLetters, type DeadLetter } from '../../support/dead-letters.js';

// What the services dead-lettered, read without consuming it.

/** Everything in DEAD_LETTERS, read with an ordered consumer (nothing is acked or removed). */
export async function deadLetters(connection: NatsConnection, manager: JetStreamManager): Promise<DeadLetter[]> {
  const info = await manager.streams.info(Streams.deadLetters);
  return readDeadLetters(connection, { max: info.state.messages });
}
