export { createHttpApp, exitAfterShutdownTimeout, type HttpAppOptions } from './http-app.js';
export { createRedis } from './redis.js';
export {
  LOGGER,
  REDIS,
  loggerProvider,
  natsProvider,
  dataSourceProvider,
  redisProvider,
  dependencyChecks,
  InfrastructureShutdown,
} from './infrastructure.js';
