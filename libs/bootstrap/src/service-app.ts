import { setFlagsFromString } from 'node:v8';
import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigError, loadEnv, type ServerEnv, type ServiceEnv } from '#libs/config';
import { createLogger, type Logger } from '#libs/observability';
import { createHttpApp, exitAfterShutdownTimeout } from './http-app.js';
import { InfrastructureModule, type InfrastructureOptions } from './infrastructure.module.js';
import { startRpcServer } from './rpc-server.js';

export interface ServiceAppOptions<Env extends ServerEnv> extends InfrastructureOptions<Env> {
  /** The queue group in which the service's replicas answer its `@MessagePattern` subjects. */
  queue: string;
}

/**
 * A service behind the gateway as a hybrid Nest application: its module (the feature modules)
 * with the InfrastructureModule, HTTP for health and metrics, and its request/reply handlers
 * served on NATS in `queue` (startRpcServer). main.ts and the tests both build it through here.
 */
export async function createServiceApp<Env extends ServerEnv>(module: Type, options: ServiceAppOptions<Env>): Promise<NestFastifyApplication> {
  const root: DynamicModule = { module, imports: [InfrastructureModule.forRoot(options)] };
  const app = await createHttpApp(root, { service: options.service, logger: options.logger });
  await startRpcServer(app, options.queue);
  return app;
}

export interface RunServiceOptions<Env extends ServiceEnv> {
  service: string;
  env: new () => Env;
  /** The service's HTTP port variable (each service has its own, DESIGN §2). */
  port: (env: Env) => number;
  create: (env: Env, logger: Logger) => Promise<INestApplication>;
}

/**
 * What a service's main.ts does: the env validated from the process environment, the logger,
 * the application, the shutdown deadline, and the HTTP listener. An invalid setting ends the
 * process with exit code 1 after one line per invalid setting on stderr (ConfigError.lines), not
 * a stack trace.
 */
export async function runService<Env extends ServiceEnv>(options: RunServiceOptions<Env>): Promise<void> {
  let env: Env;
  try {
    env = loadEnv(options.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.lines(options.service).join('\n')}\n`);
    process.exitCode = 1;
    return;
  }
  // V8 reads this flag at every full collection, so setting it at start takes effect (a heap size would not).
  if (env.HEAP_GROWING_PERCENT > 0) setFlagsFromString(`--heap-growing-percent=${env.HEAP_GROWING_PERCENT}`);
  const logger = createLogger(options.service, env.LOG_LEVEL, undefined, env.LOG_FORMAT);
  const app = await options.create(env, logger);
  exitAfterShutdownTimeout(env.SHUTDOWN_TIMEOUT_MS, logger);
  const port = options.port(env);
  await app.listen(port, env.HOST);
  logger.info({ port }, `${options.service} started`);
}
