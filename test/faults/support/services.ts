import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort, waitFor } from '../../support/index.js';

// The services and the ops CLI as child processes of the built code (dist/), so that a fault
// test can SIGKILL them; their metrics and output.

export type ServiceName = 'gateway' | 'reporting-projection' | 'payouts-read' | 'recommendations';

const PORT_VARIABLE: Record<ServiceName, string> = {
  gateway: 'PORT',
  'reporting-projection': 'REPORTING_HTTP_PORT',
  'payouts-read': 'PAYOUTS_HTTP_PORT',
  recommendations: 'RECOMMENDATIONS_HTTP_PORT',
};

export interface ServiceProcess {
  name: string;
  pid: number;
  port: number;
  url: string;
  /** Everything the process wrote to stdout and stderr so far (pino JSON lines). */
  output(): string;
  running(): boolean;
  /** Sends a signal and waits for the process to end. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not ended within 15 s. */
  stop(): Promise<void>;
  /**
   * Its /metrics text. A connection refused or reset (a keep-alive socket the process closes as
   * it is reused, a listener going away during a restart) is retried with a bounded backoff for
   * up to `timeoutMs`, as long as the process runs; any other failure is thrown at once.
   */
  metrics(options?: { timeoutMs?: number }): Promise<string>;
}

const OUTPUT_LIMIT = 4 * 1024 * 1024;

/**
 * Starts `node dist/apps/<service>/src/main.js` as Kubernetes would, on a free port, and waits
 * until its HTTP listener answers (Nest listens only after every bootstrap hook has run: the
 * migrations, the streams and the consumers are in place by then).
 */
export async function startService(
  name: ServiceName,
  env: Record<string, string | number>,
  { label = name as string, ready = 'live' as 'live' | 'ready' } = {},
): Promise<ServiceProcess> {
  const main = resolve(`dist/apps/${name}/src/main.js`);
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      [PORT_VARIABLE[name]]: String(port),
      ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    if (output.length < OUTPUT_LIMIT) output += chunk.toString();
    if (process.env.FAULTS_VERBOSE) process.stderr.write(`[${label}] ${chunk.toString()}`);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (!running()) return;
    child.kill(signal);
    await exited;
  };
  try {
    await waitFor(
      async () => {
        if (!running()) throw new Error(`${label} exited (${child.exitCode ?? child.signalCode}): ${output.slice(-2000)}`);
        return (await fetch(`${url}/health/${ready}`)).status === 200;
      },
      { timeoutMs: 60000, intervalMs: 100, what: `${label} to answer /health/${ready}` },
    );
  } catch (error) {
    await kill();
    throw error;
  }
  return {
    name: label,
    pid: child.pid!,
    port,
    url,
    output: () => output,
    running,
    kill,
    stop: async () => {
      if (!running()) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
    metrics: ({ timeoutMs = 30000 } = {}) => fetchRetryingConnectionErrors(`${url}/metrics`, { timeoutMs, running, label }),
  };
}

/** Error codes of a connection that was refused, reset or closed by the other side (Node's net, undici). */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = (e as Error & { cause?: unknown }).cause, depth++) {
    const code = (e as Error & { code?: string }).code;
    if (code !== undefined && CONNECTION_ERRORS.has(code)) return true;
    if (/other side closed|socket hang up/i.test(e.message)) return true;
  }
  return false;
}

/** GET `url`'s body, retrying connection errors (50 ms doubling to 1 s) until `timeoutMs` has passed. */
async function fetchRetryingConnectionErrors(
  url: string,
  { timeoutMs, running, label }: { timeoutMs: number; running: () => boolean; label: string },
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (let delayMs = 50; ; delayMs = Math.min(delayMs * 2, 1000)) {
    try {
      return await (await fetch(url)).text();
    } catch (error) {
      if (!isConnectionError(error) || !running() || Date.now() + delayMs > deadline) {
        throw new Error(`${label}: GET ${url} failed: ${(error as Error).message}${(error as Error & { cause?: Error }).cause ? ` (${(error as Error & { cause?: Error }).cause!.message})` : ''}`, { cause: error });
      }
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}

/** The value of one sample of a Prometheus text exposition (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Lines of a process's output that speak of a deadlock, a serialization failure or an unhandled rejection. */
export function concurrencyTrouble(output: string): string[] {
  return output.split('\n').filter((line) => /deadlock|could not serialize|unhandled|uncaught/i.test(line));
}

/** Runs the ops CLI (dist/apps/ops/src/main.js) and returns its one JSON object. */
export function ops(args: string[], env: { DATABASE_URL: string; NATS_URL: string }): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [resolve('dist/apps/ops/src/main.js'), ...args],
      { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, timeout: 30000 },
      (error, stdout, stderr) => (error ? fail(new Error(`ops ${args.join(' ')}: ${stderr || error.message}`)) : done(JSON.parse(stdout))),
    );
  });
}
