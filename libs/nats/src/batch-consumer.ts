import type { Consumer, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '#libs/observability';
import { counter, gauge, histogram } from '#libs/observability';
import type { NatsClient } from './nats-client.js';
import { publishDeadLetter, type DeadLetterCause } from './dead-letters.js';

export interface InboundMessage {
  subject: string;
  data: Uint8Array;
  /** Stream sequence: the order in which producers' publishes were stored. */
  sequence: number;
  deliveries: number;
}

export type MessageOutcome =
  | { kind: 'applied' }
  | { kind: 'dead-letter'; reason: string; cause: Exclude<DeadLetterCause, 'retries_exhausted'> };

/**
 * Applies a batch and resolves only after its effects are durable (committed); it returns one
 * outcome per message, in order. Throwing means nothing of the batch was applied.
 */
export type BatchHandler = (messages: InboundMessage[]) => Promise<MessageOutcome[]>;

export interface BatchConsumerOptions {
  stream: string;
  durable: string;
  batchSize: number;
  fetchExpiresMs: number;
  /** Deliveries after which a message whose handling keeps failing is dead-lettered. */
  maxDeliveries: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Decides whether a failure is the infrastructure's (retry forever) or the message's. */
  isTransient?: (error: unknown) => boolean;
}

const batchSeconds = histogram('weave_consumer_batch_seconds', 'Time to apply and settle one batch', ['durable']);
const pendingMessages = gauge('weave_consumer_pending_messages', 'Messages stored but not yet delivered to the consumer', ['durable']);
const ackPendingMessages = gauge('weave_consumer_ack_pending_messages', 'Messages delivered to the consumer but not yet acked', ['durable']);
const LAG_POLL_MS = 10_000;
const OUTAGE_PAUSE_MAX_MS = 5_000;
const settledTotal = counter('weave_consumer_messages_total', 'Messages settled by outcome', ['durable', 'outcome']);

/** Exponential backoff with full jitter in its upper half: 0.5 s, 1 s, 2 s … capped. */
export function retryDelayMs(deliveries: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, deliveries - 1));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

function toInbound(message: JsMsg): InboundMessage {
  return {
    subject: message.subject,
    data: message.data,
    sequence: message.seq,
    deliveries: message.info.deliveryCount,
  };
}

/**
 * A durable pull consumer settled as nestjs-jetstream does: ack after the handler committed,
 * nak with backoff on failure, dead-letter on the last delivery. A failing batch is retried
 * message by message so one poison message never blocks the ones behind it.
 */
export class JetStreamBatchConsumer {
  private running = false;
  private loop?: Promise<void>;
  private lagTimer?: NodeJS.Timeout;
  /** Pause before the next fetch after a batch failed on the infrastructure (0: none). */
  private outagePauseMs = 0;
  private wake?: () => void;
  /** When the last non-empty batch arrived (its messages tell the lag, see observeLag). */
  private lastBatchAt = 0;

  constructor(
    private readonly nats: NatsClient,
    private readonly options: BatchConsumerOptions,
    private readonly handler: BatchHandler,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
    this.lagTimer = setInterval(() => void this.observeLag(), LAG_POLL_MS);
    this.lagTimer.unref();
    void this.observeLag();
  }

  /**
   * Stops fetching, finishes the batch in flight and settles it. A fetch under way is left to
   * expire (at most fetchExpiresMs) rather than closed: messages the server already sent to a
   * closed fetch would wait a whole ack_wait before redelivery; received ones are nak'ed now.
   */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.lagTimer);
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    let consumer: Consumer | undefined;
    let next: Promise<JsMsg[]> | undefined;
    while (this.running) {
      try {
        consumer ??= await this.nats.jetstream.consumers.get(this.options.stream, this.options.durable);
        const batch = await (next ?? this.fetch(consumer));
        if (batch.length > 0) this.observeDelivered(batch);
        // Fetch the next batch while this one is applied: the network and PostgreSQL overlap.
        next = this.running ? this.fetch(consumer) : undefined;
        const outage = batch.length > 0 && (await this.process(batch)) === 'transient';
        // While the database (or whatever the handler needs) is down, every batch fails at once:
        // without a pause the loop would race through the whole backlog, nak'ing every message
        // and raising its delivery count and backoff. Wait (0.5 s doubling to 5 s) instead.
        this.outagePauseMs = outage ? Math.min(OUTAGE_PAUSE_MAX_MS, Math.max(this.options.backoffBaseMs, this.outagePauseMs * 2)) : 0;
        if (this.outagePauseMs > 0 && this.running) await this.pause(this.outagePauseMs);
      } catch (error) {
        next = undefined;
        if (!this.running) break;
        this.logger.warn({ err: error, durable: this.options.durable }, 'consumer loop error, retrying');
        consumer = undefined;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    // Messages fetched ahead but not applied go back at once rather than after ack_wait.
    const unprocessed = await next?.catch(() => [] as JsMsg[]);
    for (const message of unprocessed ?? []) message.nak();
  }

  /** While batches flow, the lag is what the server said with the last message delivered. */
  private observeDelivered(batch: JsMsg[]): void {
    this.lastBatchAt = Date.now();
    pendingMessages.set({ durable: this.options.durable }, batch[batch.length - 1].info.pending);
  }

  /**
   * Consumer lag for metrics and autoscaling (KEDA reads the same numbers from NATS), asked of
   * the server only when no batch arrived since the last poll. While batches flow their
   * messages carry num_pending, and a consumer info call is not free: nats-server before
   * 2.9.15 recalculates num_pending on each one, which on a backlog of interleaved subjects
   * stalled the pending pull for seconds (docs/benchmarks.md, Ingest).
   */
  private async observeLag(): Promise<void> {
    if (Date.now() - this.lastBatchAt < LAG_POLL_MS) return;
    try {
      const info = await this.nats.manager.consumers.info(this.options.stream, this.options.durable);
      pendingMessages.set({ durable: this.options.durable }, info.num_pending);
      ackPendingMessages.set({ durable: this.options.durable }, info.num_ack_pending);
    } catch {
      // NATS unreachable: the gauges keep their last values until it answers again
    }
  }

  private async fetch(consumer: Consumer): Promise<JsMsg[]> {
    const messages = await consumer.fetch({
      max_messages: this.options.batchSize,
      expires: this.options.fetchExpiresMs,
    });
    const batch: JsMsg[] = [];
    try {
      for await (const message of messages) batch.push(message);
    } catch (error) {
      // The fetch ended early: two idle heartbeats missed (a busy or CPU-throttled process, a
      // slow server) or the connection dropped. The messages received so far are delivered to
      // this consumer; dropping them would leave them unacked for a whole ack_wait (60 s) and
      // hold the ack floor, hence processed_through, back that long. Apply them; only a fetch
      // that brought nothing reports the error.
      if (batch.length === 0) throw error;
      this.logger.warn({ err: error, durable: this.options.durable, received: batch.length }, 'fetch ended early; applying the messages received');
    }
    return batch;
  }

  /** Waits `ms`, or less if the consumer is stopped meanwhile. */
  private async pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      this.wake = resolve;
    });
    clearTimeout(timer);
    this.wake = undefined;
  }

  /** Applies and settles a batch; 'transient' when it failed on the infrastructure and was handed back. */
  private async process(batch: JsMsg[]): Promise<'settled' | 'transient'> {
    const end = batchSeconds.startTimer({ durable: this.options.durable });
    try {
      const outcomes = await this.handler(batch.map(toInbound));
      await this.settle(batch, outcomes);
    } catch (error) {
      if (this.isTransient(error)) {
        this.logger.warn({ err: error, size: batch.length }, 'batch failed on a transient error; retrying later');
        for (const message of batch) this.retryLater(message);
        return 'transient';
      } else if (batch.length === 1) {
        await this.fail(batch[0], error);
      } else {
        this.logger.warn({ err: error, size: batch.length }, 'batch failed; isolating the failing message');
        for (const message of batch) await this.processAlone(message);
      }
    } finally {
      end();
    }
    return 'settled';
  }

  private async processAlone(message: JsMsg): Promise<void> {
    try {
      const outcomes = await this.handler([toInbound(message)]);
      await this.settle([message], outcomes);
    } catch (error) {
      if (this.isTransient(error)) this.retryLater(message);
      else await this.fail(message, error);
    }
  }

  private async settle(batch: JsMsg[], outcomes: MessageOutcome[]): Promise<void> {
    // Counted once per batch: a labelled increment per message was a measurable share of a
    // consumer's garbage at 2,000 messages a batch.
    let applied = 0;
    try {
      for (let i = 0; i < batch.length; i++) {
        const outcome = outcomes[i];
        const message = batch[i];
        if (outcome?.kind === 'dead-letter') {
          await publishDeadLetter(
            this.nats.jetstream,
            { ...toInbound(message), stream: this.options.stream, reason: outcome.reason },
            outcome.cause,
          );
          settledTotal.inc({ durable: this.options.durable, outcome: 'dead_letter' });
        } else {
          applied += 1;
        }
        message.ack();
      }
    } finally {
      if (applied > 0) settledTotal.inc({ durable: this.options.durable, outcome: 'applied' }, applied);
    }
  }

  private async fail(message: JsMsg, error: unknown): Promise<void> {
    const deliveries = message.info.deliveryCount;
    if (deliveries >= this.options.maxDeliveries) {
      this.logger.error({ err: error, subject: message.subject, seq: message.seq, deliveries }, 'dead-lettering after the last delivery');
      try {
        await publishDeadLetter(
          this.nats.jetstream,
          {
            ...toInbound(message),
            stream: this.options.stream,
            reason: `handler failed after ${deliveries} deliveries: ${(error as Error)?.message ?? String(error)}`,
          },
          'retries_exhausted',
        );
        message.ack();
        settledTotal.inc({ durable: this.options.durable, outcome: 'dead_letter' });
      } catch (publishError) {
        this.logger.error({ err: publishError }, 'dead letter publish failed; message will be redelivered');
        this.retryLater(message);
      }
      return;
    }
    this.logger.warn({ err: error, subject: message.subject, seq: message.seq, deliveries }, 'message failed; will be redelivered');
    this.retryLater(message);
  }

  private retryLater(message: JsMsg): void {
    const delay = retryDelayMs(message.info.deliveryCount, this.options.backoffBaseMs, this.options.backoffMaxMs);
    message.nak(delay);
    settledTotal.inc({ durable: this.options.durable, outcome: 'retry' });
  }

  private isTransient(error: unknown): boolean {
    return this.options.isTransient?.(error) ?? false;
  }
}
