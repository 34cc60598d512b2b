import type { NatsConnection } from '@nats-io/transport-node';

/** What a cache offers a broadcast: drop one scope, or everything. */
export interface Invalidatable {
  invalidate(scope: string): void;
  flush(): void;
}

export interface BroadcastInvalidationOptions {
  /** The core-NATS subject on which changes are announced. */
  subject: string;
  /** The scopes a message names, or `{ flush: cause }` to drop everything (say, when it cannot be read). */
  scopesOf(data: Uint8Array): readonly string[] | { flush: string };
  /**
   * Called after every flush with its cause: what `scopesOf` gave, `subscription_error`, or
   * `disconnect` / `reconnect` of the connection.
   */
  onFlush?(cause: string, error?: Error): void;
}

/** Stops listening (unsubscribes, ends the status watch). */
export interface BroadcastInvalidation {
  stop(): void;
}

/**
 * Keeps a cache in step with the announcements of changes on `subject`: each message drops the
 * scopes it names (or everything), and so do a subscription error and any disconnect or
 * reconnect of the connection, since announcements sent meanwhile were lost. The cache's TTL
 * remains the bound should one be missed otherwise.
 */
export function invalidateOnBroadcast(connection: NatsConnection, cache: Invalidatable, options: BroadcastInvalidationOptions): BroadcastInvalidation {
  const flush = (cause: string, error?: Error) => {
    cache.flush();
    options.onFlush?.(cause, error);
  };
  const subscription = connection.subscribe(options.subject, {
    callback: (error, msg) => {
      if (error) return flush('subscription_error', error);
      const scopes = options.scopesOf(msg.data);
      if ('flush' in scopes) return flush(scopes.flush);
      for (const scope of scopes) cache.invalidate(scope);
    },
  });
  const status = connection.status();
  void (async () => {
    for await (const event of status) {
      if (event.type === 'disconnect' || event.type === 'reconnect') flush(event.type);
    }
  })();
  return {
    stop() {
      subscription.unsubscribe();
      (status as { stop?: () => void }).stop?.();
    },
  };
}
