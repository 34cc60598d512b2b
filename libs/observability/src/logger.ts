import { createRequire } from 'node:module';
import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** The injection token of the process's logger (provided by the app's InfrastructureModule). */
export const LOGGER = Symbol('LOGGER');

/**
 * Paths pino blanks before a line is written: credentials must never reach a log, whatever
 * object a caller hands to the logger.
 */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  '*.authorization',
  'api_key',
  '*.api_key',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'token',
  '*.token',
  'DATABASE_URL',
  'REDIS_URL',
  'TRACKING_SIGNING_SECRET',
  'TRACKING_SIGNING_SECRET_PREVIOUS',
];

/**
 * `destination` defaults to stdout, written synchronously: pino's default asynchronous stdout only
 * flushes on 'exit', which a process ending by the SIGTERM Nest re-raises after its shutdown hooks
 * never emits, so the last lines ("shutting down", errors while closing) were lost whenever
 * closing finished first. The services log a few lines a second at most; tests pass a stream.
 */
export function createLogger(service: string, level = 'info', destination?: NodeJS.WritableStream, format: LogFormat = 'json'): Logger {
  const options = {
    level,
    base: { service },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (destination) return pino(options, destination);
  return pino(options, prettyWanted(format) ? prettyStdout() : pino.destination({ dest: 1, sync: true }));
}

/** LOG_FORMAT: `auto` is pretty on a terminal, JSON elsewhere (a pipe, a file, a log collector). */
export type LogFormat = 'auto' | 'json' | 'pretty';

export function prettyWanted(format: LogFormat, stdout: { isTTY?: boolean } = process.stdout): boolean {
  return format === 'pretty' || (format === 'auto' && stdout.isTTY === true);
}

/**
 * One readable line per entry on stdout, written synchronously like the JSON destination:
 * `12:00:01 INFO gateway: gateway started {"port":3000}`. pino-pretty is loaded only here, so a
 * service logging JSON never loads it.
 */
function prettyStdout(): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty.build({
    destination: 1,
    sync: true,
    colorize: process.stdout.isTTY === true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'service,context,pid,hostname',
    messageFormat: '{service}: {msg}',
  });
}

/**
 * What Nest says at `info` while it starts: each module loaded, each controller and route
 * mapped, "application started" (about twenty lines a service). Logged at `debug` instead, so
 * that a service's own lines carry what it started and where; LOG_LEVEL=debug shows them again.
 */
const NEST_STARTUP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestMicroservice']);

/** Lets Nest's own messages go through the same structured logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    if (context !== undefined && NEST_STARTUP_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
