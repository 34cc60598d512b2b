import { spawn } from 'node:child_process';
import { freePort, useTestStack, waitFor, REDIS_URL } from '../support/index.js';

/**
 * Each service, run as Kubernetes runs it (node dist/apps/<service>/src/main.js), stops on
 * SIGTERM by itself: it stops taking work, drains NATS, closes its pools and ends well within
 * SHUTDOWN_TIMEOUT_MS (10 s), without the hard deadline firing. Nest re-raises the signal once
 * its shutdown hooks have finished, so the process ends by SIGTERM (exit status 143), as a
 * supervisor expects of a process that honoured it.
 */
const SERVICES = [
  { name: 'gateway', portVariable: 'PORT' },
  { name: 'reporting-projection', portVariable: 'REPORTING_HTTP_PORT' },
  { name: 'payouts-read', portVariable: 'PAYOUTS_HTTP_PORT' },
  { name: 'timezone-settings', portVariable: 'TIMEZONE_HTTP_PORT' },
];

const stack = useTestStack();

describe.each(SERVICES)('$name on SIGTERM', ({ name, portVariable }) => {
  it('shuts down on its own, before the shutdown deadline', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [`dist/apps/${name}/src/main.js`], {
      env: { ...process.env, NATS_URL: stack.nats.url, DATABASE_URL: stack.db.url, REDIS_URL, HOST: '127.0.0.1', [portVariable]: String(port), LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '10000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200, { timeoutMs: 30000, what: `${name} ready` });
      const signalled = Date.now();
      child.kill('SIGTERM');
      const { code, signal } = await exited;
      expect({ ended: code === 0 || signal === 'SIGTERM', timedOut: output.includes('graceful shutdown timed out') }).toEqual({ ended: true, timedOut: false });
      expect(output).toContain('shutting down');
      expect(Date.now() - signalled).toBeLessThan(10000);
      await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
