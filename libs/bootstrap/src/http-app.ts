import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { collectProcessMetrics, PinoNestLogger, type Logger } from '#libs/observability';
import {
  blankProblem,
  clientErrorHandler,
  frameworkErrorHandler,
  installNodeLevelProblems,
  installRequestChecks,
  installShutdownRefusal,
  requestIdOf,
  type ProblemFactory,
} from './framework-problems.js';
import { installHttpHooks } from './http-hooks.js';
import { strictJsonParser } from './json-body.js';
import { HttpProblemFilter } from './problem-filter.js';

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  /** Largest request body accepted, in bytes (Fastify answers 413 above it). */
  bodyLimit?: number;
  /**
   * Problem details (RFC 9457) for the answers Fastify and Node give before Nest sees a request:
   * malformed URL, malformed HTTP message, request during shutdown. Defaults to the generic
   * `about:blank` problem; a public service passes its own to keep its problem type URIs.
   */
  problem?: ProblemFactory;
  /**
   * The peers whose X-Forwarded-For is believed (Fastify `trustProxy`: addresses and CIDRs).
   * `request.ip` is the nearest address that is not one of them, so a client cannot choose its
   * own address by sending the header. Default: none — `request.ip` is the TCP peer, whatever
   * the header says (the gateway passes TRUSTED_PROXIES, see docs/security.md).
   */
  trustProxy?: readonly string[];
}

/** The Fastify adapter, which also tells when Nest has begun shutting down (see createHttpApp). */
class ShutdownAwareFastifyAdapter extends FastifyAdapter {
  shuttingDown = false;

  /** Nest calls this first when it closes, before the providers' destroy hooks. */
  override beforeClose(): void {
    this.shuttingDown = true;
    super.beforeClose();
  }

  override async close(): Promise<void> {
    this.shuttingDown = true;
    await super.close();
  }
}

/**
 * Every service is a Nest application on Fastify: the gateway for its API, the others for
 * health and metrics. Shutdown hooks run on SIGTERM/SIGINT so NATS drains and pools close.
 *
 * Fastify's own error answers are problem details too: the router's (`frameworkErrors`), the
 * HTTP parser's (`clientErrorHandler`) and the 503 while shutting down. Fastify's
 * `return503OnClosing` writes a fixed JSON body that cannot be changed, so it is turned off and
 * an `onRequest` hook answers the 503 instead (from the start of Nest's shutdown, so also while
 * NATS and the pools close, and until the server has closed).
 */
export async function createHttpApp(module: unknown, options: HttpAppOptions): Promise<NestFastifyApplication> {
  collectProcessMetrics(options.service);
  const problem = options.problem ?? blankProblem;
  const adapter = new ShutdownAwareFastifyAdapter({
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    // An empty list is "trust nobody" (false): Fastify reads `[]` the same way, said plainly here.
    trustProxy: options.trustProxy?.length ? [...options.trustProxy] : false,
    // Node's own 400 for a missing Host has no body: installRequestChecks answers a problem.
    http: { requireHostHeader: false },
    // Request ids: the caller's X-Request-Id when it is a plain token, otherwise a new one.
    requestIdHeader: false,
    genReqId: requestIdOf,
    return503OnClosing: false,
    // Path parameters up to the longest id any contract allows (200 characters, statement ids)
    // plus percent-encoding headroom; Fastify's default of 100 answered 414 below that. Under
    // routerOptions: the top-level option is deprecated since Fastify 5 (FSTDEP022 at start).
    routerOptions: { maxParamLength: 600 },
    frameworkErrors: frameworkErrorHandler(problem, options.logger),
    clientErrorHandler: clientErrorHandler(problem, options.logger),
  });
  const fastify = adapter.getInstance() as FastifyInstance;
  installShutdownRefusal(fastify, () => adapter.shuttingDown, problem);
  installRequestChecks(fastify, problem);
  installNodeLevelProblems(fastify.server, problem);
  // Registered before Nest's own JSON parser, which then stays out (strict UTF-8, see json-body.ts).
  adapter.useBodyParser('application/json', false, { bodyLimit: options.bodyLimit ?? 64 * 1024 }, strictJsonParser(fastify));
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: new PinoNestLogger(options.logger.child({ context: 'nest' })),
    abortOnError: false,
  });
  // The default problem filter; a service's own filter, registered later, takes precedence.
  app.useGlobalFilters(new HttpProblemFilter(problem, options.logger));
  installHttpHooks(app);
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
