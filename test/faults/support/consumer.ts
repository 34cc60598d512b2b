import type { JetStreamManager } from '@nats-io/jetstream';
import { Durables, EventSubjects, Streams } from '#libs/contracts';
import { NatsClient, ensureDurableConsumer, ensureStreams } from '#libs/nats';
import { waitFor } from '../../support/index.js';

// The projection's durable consumer: prepared with a short ack_wait, its state, waiting for it.

export async function consumerState(manager: JetStreamManager) {
  const info = await manager.consumers.info(Streams.events, Durables.reportingProjection);
  return { pending: info.num_pending, ackPending: info.num_ack_pending, ackFloor: info.ack_floor.stream_seq, delivered: info.delivered.stream_seq, redelivered: info.num_redelivered };
}

/**
 * Waits until the durable consumer has applied and acked everything stored (nothing pending,
 * nothing delivered and unacked) and returns when that was first seen. After a crash, the
 * batches the dead process held come back after the consumer's ack_wait (60 s).
 */
export async function waitCaughtUp(manager: JetStreamManager, { timeoutMs = 180000, expectStored }: { timeoutMs?: number; expectStored?: number } = {}): Promise<Date> {
  await waitFor(
    async () => {
      const state = await consumerState(manager);
      if (expectStored !== undefined) {
        const stream = await manager.streams.info(Streams.events);
        if (stream.state.messages < expectStored) return false;
      }
      return state.pending === 0 && state.ackPending === 0;
    },
    { timeoutMs, intervalMs: 250, what: 'the projection to catch up (nothing pending or unacked)' },
  );
  return new Date();
}

/**
 * Creates the streams and the projection's durable consumer as the service would, but with a
 * shorter ack_wait (the service keeps an existing consumer as it is); `url` may name several
 * servers (comma separated), `replicas` the streams' copies (NATS_STREAM_REPLICAS). Messages a killed process
 * held come back after ack_wait: 15 s instead of 60 s keeps the run short; the path is the same.
 */
export async function prepareProjectionConsumer(url: string, ackWaitMs = 15_000, replicas?: number): Promise<void> {
  const client = await NatsClient.connect({ servers: url.split(','), name: 'fault-setup' });
  try {
    await ensureStreams(client.manager, { replicas });
    await ensureDurableConsumer(client.manager, {
      stream: Streams.events,
      durable: Durables.reportingProjection,
      filterSubject: EventSubjects.all,
      ackWaitMs,
      maxAckPending: 20_000,
    });
  } finally {
    await client.drain();
  }
}
