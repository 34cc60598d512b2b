export { createHttpApp, exitAfterShutdownTimeout, type HttpAppOptions } from './http-app.js';
export { HttpProblemFilter, httpExceptionDetail } from './problem-filter.js';
export {
  PROBLEM_CONTENT_TYPE,
  SHUTDOWN_RETRY_AFTER_SECONDS,
  blankProblem,
  type HttpProblem,
  type ProblemFactory,
} from './framework-problems.js';
export { createRedis, type RedisOptions } from './redis.js';
export {
  LOGGER,
  REDIS,
  loggerProvider,
  natsProvider,
  natsSettings,
  dataSourceProvider,
  redisProvider,
  dependencyChecks,
  InfrastructureShutdown,
  type NatsSettings,
} from './infrastructure.js';
export { routeLabel } from './http-hooks.js';
export { InfrastructureModule, type InfrastructureOptions } from './infrastructure.module.js';
export { startRpcServer } from './rpc-server.js';
export { createServiceApp, runService, type ServiceAppOptions, type RunServiceOptions } from './service-app.js';
export { DurableConsumer, durableConsumerProvider, durableConsumerToken, type DurableConsumerConfig } from './durable-consumer.provider.js';
export { connectWithRetry, type ConnectRetryOptions } from './connect-retry.js';
