export { NatsClient } from './nats-client.js';
export { PubAckPublisher, type PubAckPublishOptions } from './pub-ack-publisher.js';
export { natsAuthOptions } from '#libs/nats-auth';
export {
  ensureStreams,
  ensureDurableConsumer,
  STREAM_CONFIGS,
  type DurableConsumerOptions,
  type EnsureStreamsOptions,
  type StreamRetention,
} from './streams.js';
export { publishDeadLetter, type DeadLetter, type DeadLetterCause } from './dead-letters.js';
export {
  JetStreamBatchConsumer,
  retryDelayMs,
  type BatchConsumerOptions,
  type BatchHandler,
  type InboundMessage,
  type MessageOutcome,
} from './batch-consumer.js';
export { OutboxRelay, OutboxRelayOf, type OutboxEvent, type OutboxStore, type OutboxRelayOptions } from './outbox-relay.js';
export { NatsRpcServer, type NatsRpcServerOptions } from './transport/nats-rpc.server.js';
export { NatsRpcClient, NatsRpcRecord, RpcCallError, withRequestId, type NatsRpcClientOptions } from './transport/nats-rpc.client.js';
export { RpcValidationPipe } from './transport/rpc-validation.pipe.js';
export { RpcErrorFilter } from './transport/rpc-error.filter.js';
export { RpcController } from './transport/rpc-controller.decorator.js';
export { RawJson, decodeReply, encodeRequest } from './transport/rpc-wire.js';
