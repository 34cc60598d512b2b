import type { JetStreamManager } from '@nats-io/jetstream';

export const MINUTE_MS = 60_000;

export function floorToMinute(instantMs: number): Date {
  return new Date(Math.floor(instantMs / MINUTE_MS) * MINUTE_MS);
}

/**
 * The processing cutoff (DESIGN §6): the start of the minute at which every event published
 * before it had been applied. Events are applied in batches and acked after commit, so the
 * consumer's ack floor marks the oldest event that may not be applied yet; its store time
 * bounds the cutoff. When nothing is pending, everything stored before `now` is applied.
 */
export async function measureProcessedThrough(
  manager: JetStreamManager,
  stream: string,
  durable: string,
  now: () => number = Date.now,
): Promise<Date> {
  const measuredAt = now();
  const info = await manager.consumers.info(stream, durable);
  if (info.num_pending === 0 && info.num_ack_pending === 0) {
    return floorToMinute(measuredAt);
  }
  const streamInfo = await manager.streams.info(stream);
  let sequence = Math.max(info.ack_floor.stream_seq + 1, streamInfo.state.first_seq);
  // Skip holes (deleted messages) to the first stored message after the ack floor.
  for (let attempts = 0; attempts < 100 && sequence <= streamInfo.state.last_seq; attempts++, sequence++) {
    try {
      const message = await manager.streams.getMessage(stream, { seq: sequence });
      if (message) return floorToMinute(Math.min(measuredAt, message.time.getTime()));
    } catch {
      // deleted or not yet visible: try the next one
    }
  }
  return floorToMinute(measuredAt);
}
