export { createHttpApp, exitAfterShutdownTimeout, type HttpAppOptions } from './http-app.js';
export {
  PROBLEM_CONTENT_TYPE,
  SHUTDOWN_RETRY_AFTER_SECONDS,
  blankProblem,
  type HttpProblem,
  type ProblemFactory,
} from './framework-problems.js';
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
  serviceInfrastructure,
  type ServiceInfrastructureOptions,
} from './infrastructure.js';
export { routeLabel } from './http-hooks.js';
