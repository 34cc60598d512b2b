import type { NatsConnection } from '@nats-io/transport-node';
import type { IdentityChangedMessage } from '#libs/identity-core';
import type { IdentityWrites } from './commands.js';
import type { NatsClient } from '#libs/nats';
import type { OpsEnv } from './config/ops.env.js';
import type { OpsContext } from './definition.js';

/**
 * The OpsContext of one CLI process: each connection is opened on first use, with the library
 * it needs imported then, and closed by close(). `ops batch` shares one for all its commands.
 */
export class ProcessContext implements OpsContext {
  private readonly opened = new Map<string, { value: Promise<unknown>; close: (value: never) => Promise<void> }>();
  private envPromise: Promise<OpsEnv> | undefined;
  /** Set once announcing failed: the rest of a batch does not wait for NATS again. */
  private natsUnreachable = false;

  /**
   * `flushEach`: wait for NATS to take each announcement before the command's output is printed
   * (a single command); a batch only publishes, and flushes once when it closes.
   */
  constructor(
    private readonly warn: (line: string) => void,
    private readonly flushEach = true,
  ) {}

  env(): Promise<OpsEnv> {
    this.envPromise ??= import('./config/ops-settings.js').then(({ readOpsEnv }) => readOpsEnv());
    return this.envPromise;
  }

  async databaseUrl(): Promise<string> {
    const [env, { databaseUrl }] = await Promise.all([this.env(), import('#libs/connections')]);
    return databaseUrl(env);
  }

  resource<T>(key: string, open: () => Promise<T>, close: (value: T) => Promise<void>): Promise<T> {
    let entry = this.opened.get(key);
    if (!entry) {
      const value = open();
      entry = { value, close: close as (value: never) => Promise<void> };
      this.opened.set(key, entry);
      // A failed opening is not kept: the next command of a batch tries again.
      value.catch(() => this.opened.get(key)?.value === value && this.opened.delete(key));
    }
    return entry.value as Promise<T>;
  }

  identity(): Promise<IdentityWrites> {
    return this.resource(
      'identity',
      async () => {
        const [url, { IdentityStore }] = await Promise.all([this.databaseUrl(), import('./identity-store.js')]);
        return IdentityStore.open(url);
      },
      (store) => store.close(),
    );
  }

  nats(): Promise<NatsClient> {
    return this.resource(
      'jetstream',
      async () => {
        const [env, { NatsClient, ensureStreams }, { natsServers, natsTls }, { opsNatsIdentity }] = await Promise.all([
          this.env(),
          import('#libs/nats'),
          import('#libs/connections'),
          import('./config/ops-nats-identity.js'),
        ]);
        const nats = await NatsClient.connect({ servers: natsServers(env.NATS_URL), name: 'ops', identity: opsNatsIdentity(env), tls: natsTls(env) });
        try {
          // No retention here: the operator's shell need not carry the services' settings.
          await ensureStreams(nats.manager);
        } catch (error) {
          await nats.drain().catch(() => undefined);
          throw error;
        }
        return nats;
      },
      (nats) => nats.drain(),
    );
  }

  /** Best effort: the gateways' cache TTL bounds staleness when NATS cannot be reached. */
  async announce(change: IdentityChangedMessage): Promise<void> {
    if (this.natsUnreachable) return;
    const env = await this.env();
    const timeout = env.OPS_NATS_TIMEOUT_MS;
    try {
      const [nc, { IDENTITY_CHANGED_SUBJECT, encodeIdentityChanged }] = await Promise.all([
        this.resource('announce', () => this.connectPlain(env), async (connection) => {
          if (!this.flushEach && !this.natsUnreachable) await this.flush(connection, timeout).catch((error) => this.announceFailed(error));
          await connection.close();
        }),
        import('#libs/identity-core'),
      ]);
      nc.publish(IDENTITY_CHANGED_SUBJECT, encodeIdentityChanged(change));
      if (this.flushEach) await this.flush(nc, timeout);
    } catch (error) {
      this.announceFailed(error);
    }
  }

  private async flush(nc: NatsConnection, timeoutMs: number): Promise<void> {
    await Promise.race([
      nc.flush(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('flush timed out')), timeoutMs).unref()),
    ]);
  }

  private announceFailed(error: unknown): void {
    this.natsUnreachable = true;
    this.warn(
      `warning: the change is saved but gateways could not be notified over NATS (${(error as Error).message}); ` +
        'their cached entries expire within a second',
    );
  }

  /** A core NATS connection (no JetStream): the light client, for the identity broadcasts. */
  private async connectPlain(env: OpsEnv): Promise<NatsConnection> {
    const [{ connect }, { natsServers, natsTls }, { natsAuthOptions }, { opsNatsIdentity }] = await Promise.all([
      import('@nats-io/transport-node'),
      import('#libs/connections'),
      import('#libs/nats-auth'),
      import('./config/ops-nats-identity.js'),
    ]);
    return connect({
      servers: natsServers(env.NATS_URL),
      name: 'ops',
      reconnect: false,
      timeout: env.OPS_NATS_TIMEOUT_MS,
      ...(await natsAuthOptions(opsNatsIdentity(env), 'ops')),
      ...(natsTls(env) ? { tls: natsTls(env) } : {}),
    });
  }

  /** Closes whatever was opened; failures to close are not the command's. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.opened.values()].map(async ({ value, close }) => {
        try {
          await close((await value) as never);
        } catch {
          // never opened, or already gone
        }
      }),
    );
    this.opened.clear();
  }
}
