import { natsIdentity, type NatsIdentity } from '#libs/connections';

/** The CLI's NATS identity: NATS_USER / NATS_CREDS when set, else `ops` with NATS_PASSWORD_OPS, else anonymous. */
export function opsNatsIdentity(env: { NATS_USER?: string; NATS_PASSWORD?: string; NATS_CREDS?: string; NATS_PASSWORD_OPS?: string }): NatsIdentity | undefined {
  return natsIdentity(env) ?? (env.NATS_PASSWORD_OPS ? { user: 'ops', pass: env.NATS_PASSWORD_OPS } : undefined);
}
