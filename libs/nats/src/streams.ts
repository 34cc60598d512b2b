import { AckPolicy, DeliverPolicy, StorageType, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { DeadLetterSubjects, EventSubjects, SettingsSubjects, Streams } from '#libs/contracts';
import type { Logger } from '#libs/observability';

const TWO_MINUTES_NS = nanos(2 * 60 * 1000);
const DAY_MS = 24 * 60 * 60 * 1000;

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

/** Days after which JetStream removes a stream's messages (EVENTS_MAX_AGE_DAYS, DEAD_LETTERS_MAX_AGE_DAYS); 0: never. */
export interface StreamRetention {
  eventsMaxAgeDays: number;
  deadLettersMaxAgeDays: number;
}

/** The max_age (nanoseconds, 0 = none) each stream should have under `retention`; SETTINGS keeps everything. */
function maxAges(retention: StreamRetention): Record<string, number> {
  return {
    [Streams.events]: nanos(retention.eventsMaxAgeDays * DAY_MS),
    [Streams.deadLetters]: nanos(retention.deadLettersMaxAgeDays * DAY_MS),
    [Streams.settings]: 0,
  };
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(e?.message ?? '');
}

function isAlreadyInUse(error: unknown): boolean {
  return /already in use|already exists/i.test((error as Error)?.message ?? '');
}

function isPermissionDenied(error: unknown): boolean {
  return (error as Error)?.name === 'PermissionViolationError' || /permissions violation/i.test((error as Error)?.message ?? '');
}

export interface EnsureStreamsOptions {
  /** Applied at start: a missing stream is created with it, an existing one's max_age updated to it. */
  retention?: StreamRetention;
  /**
   * Copies of each stream (NATS_STREAM_REPLICAS): a missing stream is created with it, an
   * existing one's num_replicas brought to it (JetStream adds or removes the copies online).
   * Undefined: the server's default (1) for new streams, existing ones left as they are.
   */
  replicas?: number;
  /** Told when this NATS user may not update a stream (deploy/nats/users.conf: reporting-projection and ops may). */
  logger?: Logger;
}

/**
 * Creates the streams of DESIGN §4 when missing; safe for replicas starting at once. With a
 * `retention`, also brings each stream's max_age to it (lowering it removes the older messages
 * at once); with `replicas`, its num_replicas (more than the cluster has servers fails, loudly).
 * A NATS user without the right to update a stream leaves it as it is, with a warning: the
 * stream's owner (reporting-projection) applies the same settings when it starts.
 */
export async function ensureStreams(manager: JetStreamManager, options: EnsureStreamsOptions = {}): Promise<void> {
  const wanted = options.retention ? maxAges(options.retention) : undefined;
  for (const base of STREAM_CONFIGS) {
    const config: Partial<StreamConfig> & { name: string } = {
      ...base,
      ...(wanted ? { max_age: wanted[base.name] } : {}),
      ...(options.replicas !== undefined ? { num_replicas: options.replicas } : {}),
    };
    let info: StreamInfo;
    try {
      info = await manager.streams.info(config.name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await manager.streams.add(config);
        continue;
      } catch (addError) {
        if (!isAlreadyInUse(addError)) throw addError;
        info = await manager.streams.info(config.name);
      }
    }
    const current = info.config;
    const changes: Partial<StreamConfig> = {};
    if (config.max_age !== undefined && current.max_age !== config.max_age) changes.max_age = config.max_age;
    if (config.num_replicas !== undefined && current.num_replicas !== config.num_replicas) changes.num_replicas = config.num_replicas;
    if (Object.keys(changes).length === 0) continue;
    // A single server refuses to create a stream with replicas but accepts them in an update
    // (and keeps one copy): refuse here, as for a new stream.
    if ((changes.num_replicas ?? 1) > 1 && !info.cluster?.name) {
      throw new Error(`${config.name}: ${changes.num_replicas} stream replicas need a JetStream cluster, and this NATS runs JetStream on a single server (NATS_STREAM_REPLICAS)`);
    }
    const previous = { max_age_ns: current.max_age, num_replicas: current.num_replicas };
    try {
      await manager.streams.update(config.name, changes);
      if (changes.max_age !== undefined) options.logger?.info({ stream: config.name, max_age_ns: changes.max_age, previous_ns: current.max_age }, 'stream retention updated');
      if (changes.num_replicas !== undefined) options.logger?.info({ stream: config.name, num_replicas: changes.num_replicas, previous: current.num_replicas }, 'stream replicas updated');
    } catch (error) {
      if (!isPermissionDenied(error)) throw error;
      options.logger?.warn({ stream: config.name, ...previous, wanted: changes }, 'stream settings differ from the settings, and this NATS user may not change them');
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
