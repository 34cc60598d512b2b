import { readFile } from 'node:fs/promises';
import { credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import type { NatsIdentity } from '#libs/config';

/**
 * Connect options of a NATS identity (DESIGN §8). An authenticated process takes its own inbox
 * prefix, `_INBOX_<user>` (with a creds file: `_INBOX_<connection name>`): deploy/nats/users.conf
 * lets each user subscribe to its own prefix only, so no user can read another's replies or
 * JetStream deliveries. Anonymous (no identity): the client's defaults, for a developer's open NATS.
 */
export async function natsAuthOptions(identity: NatsIdentity | undefined, name: string): Promise<Partial<ConnectionOptions>> {
  if (identity?.credsFile) {
    const creds = await readFile(identity.credsFile);
    return { authenticator: credsAuthenticator(new Uint8Array(creds)), inboxPrefix: `_INBOX_${name}` };
  }
  if (identity?.user) return { user: identity.user, pass: identity.pass, inboxPrefix: `_INBOX_${identity.user}` };
  return {};
}
