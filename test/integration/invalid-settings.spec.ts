import { spawn } from 'node:child_process';
import { SERVICE_PORT_VARIABLES } from '../support/service-envs.js';

/**
 * A service started alone, as Kubernetes starts it (node dist/apps/<service>/src/main.js), with
 * invalid settings: it prints one line per invalid setting on stderr (which variable, why; never
 * the value), no stack trace, nothing on stdout, and exits with status 1 before connecting to
 * anything (the servers named here do not exist).
 */
const SERVICES = SERVICE_PORT_VARIABLES;

const SECRET = 'pw-that-must-not-be-printed';

function run(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe.each(SERVICES)('$name with invalid settings', ({ name, portVariable }) => {
  it('prints one line per invalid setting and exits 1, without a stack trace', async () => {
    const { code, stdout, stderr } = await run(`dist/apps/${name}/src/main.js`, {
      [portVariable]: '70000',
      NATS_URL: 'http://127.0.0.1:1',
      NATS_PASSWORD: SECRET,
      DATABASE_URL: `postgres://weave:${SECRET}@127.0.0.1:1/weave`,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.endsWith('\n')).toBe(true);
    expect(stderr.trimEnd().split('\n').sort()).toEqual(
      [
        `${name}: invalid setting ${portVariable}: must not be greater than 65535`,
        `${name}: invalid setting NATS_URL: must be nats:// URLs, comma separated`,
        `${name}: invalid setting NATS_USER: must be set with NATS_PASSWORD: a user name of letters, digits, - and _`,
      ].sort(),
    );
    expect(stderr).not.toContain(SECRET);
  });
});

describe('gateway with tracking secrets shorter than 32 bytes', () => {
  it('names both variables and why, never their values, and exits 1', async () => {
    // 31 bytes, and 16 characters that are 31 bytes (UTF-8): bytes count, not characters.
    const current = 'tracking-current-secret-31bytes';
    const previous = `${'é'.repeat(15)}x`;
    const { code, stdout, stderr } = await run('dist/apps/gateway/src/main.js', {
      NATS_URL: 'nats://127.0.0.1:1',
      DATABASE_URL: 'postgres://weave@127.0.0.1:1/weave',
      REDIS_URL: 'redis://127.0.0.1:1',
      TRACKING_SIGNING_SECRET: current,
      TRACKING_SIGNING_SECRET_PREVIOUS: previous,
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n').sort()).toEqual([
      'gateway: invalid setting TRACKING_SIGNING_SECRET: must be at least 32 bytes; choose a random one (openssl rand -base64 48)',
      'gateway: invalid setting TRACKING_SIGNING_SECRET_PREVIOUS: must be at least 32 bytes; choose a random one (openssl rand -base64 48)',
    ]);
    expect(stderr).not.toContain(current);
    expect(stderr).not.toContain(previous);
  });
});
