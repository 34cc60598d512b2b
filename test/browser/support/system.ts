import { randomBytes } from 'node:crypto';

/**
 * The running system of the browser tests, as the global setup started it (global-setup.ts) and
 * handed it to the tests through the environment.
 */
export interface Account {
  username: string;
  password: string;
  sub: string;
}

export interface DemoResult {
  agent_id: string;
  owner_uid: string;
  keys: Record<'live' | 'test', { key_id: string; api_key: string }>;
  expected_reports: Record<'live' | 'test', Record<string, unknown>>;
}

export interface BrowserSystem {
  /** e.g. http://127.0.0.1:40123 */
  gateway: string;
  /** The development identity provider the launcher started. */
  issuer: string;
  clientId: string;
  /** The demo owner (role agent), and an owner without a role of platform agent_viewer. */
  owner: Account;
  viewer: Account & { agentId: string };
  databaseUrl: string;
  /** What the launcher printed up to its sign-in line. */
  launcherOutput: string;
  /** pid of each service, from the launcher's "started" line. */
  pids: Record<string, number>;
  /** `npm run demo -- --json`. */
  demo: DemoResult;
}

const VARIABLE = 'WEAVE_BROWSER_SYSTEM';

export function publishSystem(system: BrowserSystem): void {
  process.env[VARIABLE] = JSON.stringify(system);
}

export function system(): BrowserSystem {
  const text = process.env[VARIABLE];
  if (!text) throw new Error(`${VARIABLE} is not set: the browser tests run through their global setup (npm run test:browser)`);
  return JSON.parse(text) as BrowserSystem;
}

export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}
