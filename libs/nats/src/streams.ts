import { AckPolicy, DeliverPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { DeadLetterSubjects, EventSubjects, SettingsSubjects, Streams } from '#libs/contracts';

const TWO_MINUTES_NS = nanos(2 * 60 * 1000);

export const STREAM_CONFIGS: (Partial<StreamConfig> & { name: string })[] = [
  {
    name: Streams.events,
    subjects: [EventSubjects.all],
    storage: StorageType.File,
    duplicate_window: TWO_MINUTES_NS,
  },
  {
    name: Streams.deadLetters,
    subjects: [DeadLetterSubjects.all],
    storage: StorageType.File,
    duplicate_window: TWO_MINUTES_NS,
  },
  {
    // Settings changes (settings.timezone.changed, issue 3): few, small and needed by every
    // consumer that starts later, so kept on file storage with no age limit.
    name: Streams.settings,
    subjects: [SettingsSubjects.all],
    storage: StorageType.File,
    duplicate_window: TWO_MINUTES_NS,
  },
];

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(e?.message ?? '');
}

function isAlreadyInUse(error: unknown): boolean {
  return /already in use|already exists/i.test((error as Error)?.message ?? '');
}

/** Creates the streams of DESIGN §4 when missing; safe for replicas starting at once. */
export async function ensureStreams(manager: JetStreamManager, configs = STREAM_CONFIGS): Promise<void> {
  for (const config of configs) {
    try {
      await manager.streams.info(config.name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await manager.streams.add(config);
      } catch (addError) {
        if (!isAlreadyInUse(addError)) throw addError;
      }
    }
  }
}

export interface DurableConsumerOptions {
  stream: string;
  durable: string;
  filterSubject: string;
  ackWaitMs: number;
  maxAckPending: number;
}

/** Creates (or keeps) a durable pull consumer with explicit acks. */
export async function ensureDurableConsumer(manager: JetStreamManager, options: DurableConsumerOptions): Promise<void> {
  try {
    await manager.consumers.info(options.stream, options.durable);
    return;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  try {
    await manager.consumers.add(options.stream, {
      durable_name: options.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: options.filterSubject,
      ack_wait: nanos(options.ackWaitMs),
      // Unlimited at the server: our settlement dead-letters after its own bounded retries, so
      // the server never abandons a message silently (which would also freeze the ack floor).
      max_deliver: -1,
      max_ack_pending: options.maxAckPending,
    });
  } catch (error) {
    if (!isAlreadyInUse(error)) throw error;
  }
}
