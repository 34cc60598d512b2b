import type { BeforeApplicationShutdown, FactoryProvider, InjectionToken, OnApplicationBootstrap } from '@nestjs/common';
import { isTransientDatabaseError } from '#libs/database';
import {
  JetStreamBatchConsumer,
  NatsClient,
  ensureDurableConsumer,
  type BatchConsumerOptions,
  type BatchHandler,
  type DurableConsumerOptions,
} from '#libs/nats';
import type { Logger } from '#libs/observability';
import { LOGGER } from './infrastructure.js';

/** What a service says about one of its durable consumers; the rest is the same for all. */
export interface DurableConsumerConfig {
  /** The durable pull consumer, created at bootstrap if it does not exist. */
  consumer: DurableConsumerOptions;
  /** Messages fetched and applied at once. */
  batchSize: number;
  /** Deliveries after which a message whose handling keeps failing is dead-lettered. */
  maxDeliveries: number;
  /** Applies a batch and resolves once its effects are committed. */
  handler: BatchHandler;
  /** Fetch, backoff and transient-error settings other than the defaults below. */
  overrides?: Partial<Pick<BatchConsumerOptions, 'fetchExpiresMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'isTransient'>>;
}

const DEFAULTS = {
  fetchExpiresMs: 1000,
  backoffBaseMs: 500,
  backoffMaxMs: 30_000,
  // The handlers write to PostgreSQL: while it is unreachable, retry without spending deliveries.
  isTransient: isTransientDatabaseError,
} satisfies Partial<BatchConsumerOptions>;

/**
 * A JetStreamBatchConsumer tied to the application's lifecycle: the durable consumer is
 * ensured and the loop started at bootstrap; at shutdown (beforeApplicationShutdown, so before
 * NATS drains and the pools close) it stops fetching and the batch in flight is committed and
 * acked.
 */
export class DurableConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: JetStreamBatchConsumer;

  constructor(
    private readonly nats: NatsClient,
    private readonly logger: Logger,
    readonly name: string,
    private readonly config: DurableConsumerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { consumer, batchSize, maxDeliveries, handler, overrides } = this.config;
    await ensureDurableConsumer(this.nats.manager, consumer);
    this.consumer = new JetStreamBatchConsumer(
      this.nats,
      { ...DEFAULTS, ...overrides, stream: consumer.stream, durable: consumer.durable, batchSize, maxDeliveries },
      handler,
      this.logger.child({ component: this.name }),
    );
    this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }
}

/** The injection token of the durable consumer named `name` (see durableConsumerProvider). */
export function durableConsumerToken(name: string): string {
  return `DurableConsumer:${name}`;
}

/**
 * A provider that runs a durable JetStream consumer for the module that declares it, e.g.
 *
 *     durableConsumerProvider('ingestion', {
 *       inject: [ProjectionService, ReportingProjectionEnv],
 *       useFactory: (projection, env) => ({ consumer: {...}, batchSize: env.INGEST_BATCH_SIZE, …,
 *                                           handler: (messages) => projection.applyBatch(messages) }),
 *     })
 *
 * `name` is the consumer's log component and, through durableConsumerToken, its token.
 */
export function durableConsumerProvider<Deps extends unknown[]>(
  name: string,
  options: { inject: InjectionToken[]; useFactory: (...deps: Deps) => DurableConsumerConfig },
): FactoryProvider<DurableConsumer> {
  return {
    provide: durableConsumerToken(name),
    inject: [NatsClient, LOGGER, ...options.inject],
    useFactory: (nats: NatsClient, logger: Logger, ...deps: unknown[]) => new DurableConsumer(nats, logger, name, options.useFactory(...(deps as Deps))),
  };
}
