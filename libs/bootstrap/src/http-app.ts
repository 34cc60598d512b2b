import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { collectProcessMetrics, PinoNestLogger, type Logger } from '#libs/observability';

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  /** Largest request body accepted, in bytes (Fastify answers 413 above it). */
  bodyLimit?: number;
}

/**
 * Every service is a Nest application on Fastify: the gateway for its API, the others for
 * health and metrics. Shutdown hooks run on SIGTERM/SIGINT so NATS drains and pools close.
 */
export async function createHttpApp(module: unknown, options: HttpAppOptions): Promise<NestFastifyApplication> {
  collectProcessMetrics(options.service);
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    trustProxy: true,
    // Request ids: accept the caller's X-Request-Id, otherwise generate one.
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    return503OnClosing: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: new PinoNestLogger(options.logger.child({ context: 'nest' })),
    abortOnError: false,
  });
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  return app;
}

/**
 * Installs the last line of defence of graceful shutdown: if closing has not finished within
 * `timeoutMs` after a signal, the process exits anyway (Kubernetes would SIGKILL it soon after).
 */
export function exitAfterShutdownTimeout(timeoutMs: number, logger: Logger): void {
  const arm = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ timeoutMs }, 'graceful shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs).unref();
  };
  process.once('SIGTERM', () => arm('SIGTERM'));
  process.once('SIGINT', () => arm('SIGINT'));
}
