import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';

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
export function createLogger(service: string, level = 'info', destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    base: { service },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}

/** Lets Nest's own messages go through the same structured logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
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
