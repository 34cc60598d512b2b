import type { Redis } from 'ioredis';
import { createRedis } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';

/** After a Redis error or timeout, checks are skipped (fail open) for this long. */
const BREAKER_MS = 1000;
const WARNING_INTERVAL_MS = 10_000;

export interface FailOpenRedisOptions {
  url: string;
  /** REDIS_TLS_CA_FILE: the CA of a rediss:// server's certificate. */
  tlsCaFile?: string;
  /** The connection's name (CLIENT LIST). */
  name: string;
  /** How long a command may take before the check fails open. */
  timeoutMs: number;
  /** Not connected until first used (nothing to check). */
  lazy?: boolean;
  /** Commands issued in the same tick go out in one write (ioredis auto-pipelining): fewer system calls under concurrency. */
  autoPipelining?: boolean;
  /** Lua scripts, defined as commands of the client (EVALSHA, loaded on first use). */
  scripts: Record<string, { numberOfKeys: number; lua: string }>;
  logger: Logger;
  /** Counts one check skipped because Redis did not answer. */
  countFailOpen: () => void;
  /** Logged at most every 10 s while Redis does not answer (with the error and how many checks were skipped). */
  warning: string;
}

/**
 * A Redis connection for checks on the request path that must never hold a request up: its own
 * connection (a command timeout of its own; a slow check never queues behind other traffic),
 * and fail-open handling: when a call errs or times out the check is skipped (counted, warned
 * about at most every 10 s), and Redis is left alone for a second so that a hanging Redis cannot
 * add its timeout to every request. Used by the rate limiter and by the tracking routes' checks.
 */
export class FailOpenRedis<Commands extends object> {
  readonly client: Redis & Commands;
  private breakerUntil = 0;
  private lastWarning = 0;
  private failedOpenSinceWarning = 0;

  constructor(private readonly options: FailOpenRedisOptions) {
    const client = createRedis(
      options.url,
      options.name,
      { commandTimeout: options.timeoutMs, lazyConnect: options.lazy ?? false, enableAutoPipelining: options.autoPipelining ?? false },
      options.tlsCaFile,
    );
    for (const [name, script] of Object.entries(options.scripts)) client.defineCommand(name, script);
    client.on('error', (error: Error) => this.warn(error));
    this.client = client as Redis & Commands;
  }

  /** Waits up to `ms` for the connection; false when it is not ready by then. */
  async ready(ms: number): Promise<boolean> {
    const isReady = () => this.client.status === 'ready';
    if (isReady()) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.client.once('ready', () => resolve())),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
    return isReady();
  }

  /** Whether Redis failed within the last second: the caller then skips its check (counted here unless `counted` is false). */
  breakerOpen(counted = true): boolean {
    if (Date.now() >= this.breakerUntil) return false;
    if (counted) this.skipped();
    return true;
  }

  /**
   * `call`'s answer; undefined when the breaker is open or the call fails (the check is
   * skipped). `counted`: false for calls that are no check (a clean-up), which fail silently.
   */
  async run<T>(call: (client: Redis & Commands) => Promise<T>, counted = true): Promise<T | undefined> {
    if (this.breakerOpen(counted)) return undefined;
    try {
      return await call(this.client);
    } catch (error) {
      this.failOpen(error as Error, counted);
      return undefined;
    }
  }

  /** Records a failed call: counted (unless told not to), the breaker opens for a second, a warning at most every 10 s. */
  failOpen(error: Error, counted = true): void {
    if (counted) this.skipped();
    this.breakerUntil = Date.now() + BREAKER_MS;
    this.warn(error);
  }

  /** Sends what is queued, then closes (at most `ms` later). */
  async close(ms = 500): Promise<void> {
    if (this.client.status === 'end') return;
    if (this.client.status === 'ready') {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.client.quit().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
    }
    // quit() may have ended it meanwhile (the status is read again after the await).
    if ((this.client.status as string) !== 'end') this.client.disconnect();
  }

  private skipped(): void {
    this.options.countFailOpen();
    this.failedOpenSinceWarning++;
  }

  private warn(error: Error): void {
    if (Date.now() - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = Date.now();
    this.options.logger.warn({ err: error.message, failedOpen: this.failedOpenSinceWarning }, this.options.warning);
    this.failedOpenSinceWarning = 0;
  }
}
