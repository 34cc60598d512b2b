import { retryDelayMs } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { describeConnectionError } from '#libs/connections';

export interface ConnectRetryOptions<T> {
  /** The server, as people call it: "NATS", "PostgreSQL". */
  server: string;
  /** Where, without credentials (redactUrl). */
  target: string;
  logger: Logger;
  attempt: () => Promise<T>;
  /** Failures worth another attempt (default: all); others are thrown at once. */
  retryable?: (error: unknown) => boolean;
  baseMs?: number;
  maxMs?: number;
}

/**
 * Connects at start until the server answers: a service started alone (Kubernetes, or before
 * its servers) waits for them with backoff (0.5 s doubling to 10 s, jittered) and logs one line
 * per failed attempt, instead of crashing with a stack trace at the first refusal. It is not
 * ready meanwhile (its HTTP listener starts after its connections).
 */
export async function connectWithRetry<T>(options: ConnectRetryOptions<T>): Promise<T> {
  const { server, target, logger } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      const connected = await options.attempt();
      if (attempt > 1) logger.info({ server, url: target, attempt }, `${server} reached at ${target}`);
      return connected;
    } catch (error) {
      if (options.retryable && !options.retryable(error)) throw error;
      const delay = retryDelayMs(attempt, options.baseMs ?? 500, options.maxMs ?? 10000);
      const reason = describeConnectionError(error);
      logger.warn(
        { server, url: target, attempt, retryInMs: delay, reason },
        `${server} not reachable at ${target} (${reason}); attempt ${attempt} failed, retrying in ${(delay / 1000).toFixed(1)} s`,
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
