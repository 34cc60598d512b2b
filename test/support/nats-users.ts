import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startNats, type TestNats } from './servers.js';

/**
 * The real nats-server with deploy/nats/nats-server.conf (DESIGN §8): every user with a fresh
 * random password (a letter first: the server parses the variable as a configuration value).
 */
export const NATS_CONFIG_FILE = join(process.cwd(), 'deploy', 'nats', 'nats-server.conf');

export const NATS_USERS = ['gateway', 'reporting-projection', 'payouts-read', 'timezone-settings', 'recommendations', 'ops', 'producer'] as const;
export type NatsUser = (typeof NATS_USERS)[number];

/** NATS_PASSWORD_<U>: upper case, `-` as `_`. */
export function natsPasswordVariable(user: string): string {
  return `NATS_PASSWORD_${user.toUpperCase().replace(/-/g, '_')}`;
}

export interface SecuredNats extends TestNats {
  /** The server's monitoring endpoint (/connz?auth=true names each connection's user). */
  monitorUrl: string;
  logFile: string;
  passwords: Record<NatsUser, string>;
  /** NATS_PASSWORD_<U> of every user, as `npm start` and the server take them. */
  passwordEnv: Record<string, string>;
  /** The connect options of a user. */
  credentials(user: NatsUser): { user: string; pass: string };
  /** NATS_USER / NATS_PASSWORD of a user, as a service's env takes them. */
  identityEnv(user: NatsUser): { NATS_USER: string; NATS_PASSWORD: string };
}

export async function startSecuredNats(): Promise<SecuredNats> {
  const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, `p${randomBytes(18).toString('hex')}`])) as Record<NatsUser, string>;
  const passwordEnv = Object.fromEntries(NATS_USERS.map((u) => [natsPasswordVariable(u), passwords[u]]));
  const monitorPort = await freePort();
  const logFile = join(tmpdir(), `weave-nats-${randomBytes(4).toString('hex')}.log`);
  const nats = await startNats({ configFile: NATS_CONFIG_FILE, env: passwordEnv, probe: { user: 'ops', pass: passwords.ops }, monitorPort, logFile });
  return {
    ...nats,
    monitorUrl: `http://127.0.0.1:${monitorPort}`,
    logFile,
    passwords,
    passwordEnv,
    credentials: (user) => ({ user, pass: passwords[user] }),
    identityEnv: (user) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] }),
  };
}
