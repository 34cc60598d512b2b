/**
 * Helpers of the HTTP benchmarks: child services started from dist/ (the deployment shape),
 * autocannon runs, and one printed line per measured load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { IdentityRepository, createIdentityDataSource, type CreatedKey, type KeyMode } from '#libs/identity';
import { freePort } from '../test/support/index.js';
import { fmt, processCpuSeconds } from './support.js';

/** The part of autocannon 9's result this harness reads (autocannon ships no types). */
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { average: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  '2xx': number;
  statusCodeStats?: Record<string, { count: number }>;
}
/** One request of the sequence every connection loops over; `setupRequest` may change it each time, with the connection's `context`. */
interface AutocannonRequest<Context> {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  setupRequest?: (request: { path?: string; headers?: Record<string, string> }, context: Context) => object;
  /** Called with each answer of this request (its status first). */
  onResponse?: (status: number) => void;
}
interface AutocannonOptions<Context> {
  url: string;
  connections: number;
  /** Seconds to run; ignored when `amount` is given. */
  duration?: number;
  /** Requests to send in all, over every connection (instead of a duration). */
  amount?: number;
  headers?: Record<string, string>;
  /** The sequence every connection loops over (e.g. one request per platform key). */
  requests?: AutocannonRequest<Context>[];
  /** Seconds before a request counts as timed out. */
  timeout?: number;
  /** Requests per second over all connections (default: as fast as answers come). */
  overallRate?: number;
}
/** A run under way: its result once it ends, and every answer as it comes (with the connection's client, whose request context is still the one setupRequest filled for this answer). */
interface AutocannonRun<Context> extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: { requestIterator: { context: Context } }, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
}
/** autocannon itself, for runs that set every request up and watch every answer (bench:mixed, bench:soak); `load` for a plain run. */
export const autocannon = createRequire(import.meta.url)('autocannon') as <Context extends object = object>(options: AutocannonOptions<Context>) => AutocannonRun<Context>;

export interface LoadFigures {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  total: number;
  ok: number;
  non2xx: number;
  /** Answers that were not 2xx, by status (when the run knows them). */
  statuses?: Record<string, number>;
  errors: number;
  timeouts: number;
}

/** One autocannon run (autocannon runs in this process, on the main thread); `requests`: a sequence each connection loops over. */
export async function load(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; requests?: AutocannonOptions<object>['requests']; overallRate?: number },
): Promise<LoadFigures> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
    requests: options.requests,
    timeout: 10,
    overallRate: options.overallRate,
  });
  return figuresOf(result);
}

/** The figures of an autocannon result; `alsoOk`: statuses other than 2xx that count as answered as expected (e.g. '302'). */
export function figuresOf(result: AutocannonResult, alsoOk: string[] = []): LoadFigures {
  const expected = (status: string) => status.startsWith('2') || alsoOk.includes(status);
  const extra = alsoOk.reduce((count, status) => count + (result.statusCodeStats?.[status]?.count ?? 0), 0);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.average,
    total: result.requests.total,
    ok: result['2xx'] + extra,
    non2xx: result.non2xx - extra,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).filter(([status]) => !expected(status)).map(([status, { count }]) => [status, count])),
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

export function describeLoad(f: LoadFigures): string {
  return (
    `${fmt(f.rps)} req/s (average); latency p50 ${f.p50} ms, p90 ${f.p90} ms, p99 ${f.p99} ms, max ${f.max} ms; ` +
    `${fmt(f.total)} requests, non-2xx ${fmt(f.non2xx)}${f.non2xx > 0 && f.statuses ? ` (${Object.entries(f.statuses).map(([status, count]) => `${status}: ${fmt(count)}`).join(', ')})` : ''}, ` +
    `errors ${fmt(f.errors)}, timeouts ${fmt(f.timeouts)}`
  );
}

export interface Child {
  name: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `node [nodeArgs] <script> [args]` with `env` added to this process's environment. Its
 * stdout/stderr are echoed to this process's stderr with a prefix (the services log at warn, so
 * little comes out).
 */
export function startChild(name: string, script: string, env: Record<string, string | number>, args: string[] = [], nodeArgs: string[] = []): Child {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const echo = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) process.stderr.write(`[${name}] ${line}\n`);
  };
  child.stdout?.on('data', echo);
  child.stderr?.on('data', echo);
  return {
    name,
    process: child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Polls an HTTP URL until it answers `status` (bounded). */
export async function waitForHttp(url: string, { status = 200, timeoutMs = 60_000, child }: { status?: number; timeoutMs?: number; child?: Child } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child && child.process.exitCode !== null) throw new Error(`${child.name} exited with code ${child.process.exitCode}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === status) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${url} to answer ${status} (last: ${last})`);
}

/** One sample of a Prometheus text exposition: the metric name, its labels and its value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Reads a `/metrics` page (Prometheus text format) into samples. */
export async function scrapeMetrics(url: string): Promise<MetricSample[]> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  const samples: MetricSample[] = [];
  for (const line of (await response.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[4]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels` (NaN when there is none). */
export function metricSum(samples: MetricSample[], name: string, labels: Record<string, string> = {}): number {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? NaN : matching.reduce((sum, s) => sum + s.value, 0);
}

/** CPU seconds (user + system) a service has used, from its `/metrics`. */
export async function cpuSeconds(metricsUrl: string): Promise<number> {
  return metricSum(await scrapeMetrics(metricsUrl), 'process_cpu_seconds_total');
}

/**
 * CPU seconds (user + system) a child process has used so far, from /proc (Linux): for
 * processes without a /metrics page (the ceiling's), and the same measure for those with one.
 */
export function childCpuSeconds(child: Child): number {
  return processCpuSeconds(child.process.pid);
}

/** CPU seconds of each child, for a per-request figure around a load. */
export function cpuOf(children: Child[]): number[] {
  return children.map(childCpuSeconds);
}

/** A child process's resident set now and its peak so far (VmRSS, VmHWM of /proc/<pid>/status), in bytes; Linux only. */
export async function residentMemory(child: Child): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${child.process.pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A service of the deployment shape, started from dist/. */
export interface Service {
  name: string;
  child: Child;
  /** Its /metrics URL. */
  metrics: string;
}

/**
 * reporting-projection, payouts-read, timezone-settings and the gateway as child processes from
 * dist/ (in that order, each ready before the next), on free ports; `stop()` stops them in the
 * reverse order, so no request in flight meets a service that is gone. `stopService(name)` stops
 * one (SIGTERM: it drains) and `startService(name)` starts it again on its port, as a restart
 * in production would.
 */
export async function startDeployment(
  env: Record<string, string>,
  options: { publishIntervalMs: number; name: string; /** Node options of every service, e.g. `--cpu-prof --cpu-prof-dir=…` (not allowed in NODE_OPTIONS). */ nodeArgs?: string[] },
): Promise<{ services: Service[]; base: string; stop(): Promise<void>; stopService(name: string): Promise<void>; startService(name: string): Promise<Service> }> {
  const services: Service[] = [];
  const launchers = new Map<string, () => Promise<Service>>();
  // Stopping twice is harmless: a child that has exited is not waited for.
  const stop = async () => {
    for (const service of [...services].reverse()) await service.child.stop();
  };
  const launch = async (name: string, vars: Record<string, string | number>, port: number): Promise<Service> => {
    const child = startChild(name, `dist/apps/${name}/src/main.js`, vars, [], options.nodeArgs);
    const service = { name, child, metrics: `http://127.0.0.1:${port}/metrics` };
    const index = services.findIndex((s) => s.name === name);
    if (index >= 0) services[index] = service;
    else services.push(service);
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, { child });
    return service;
  };
  const start = async (name: string, own: Record<string, string | number>, portVariable: string) => {
    const port = await freePort();
    const vars = { ...env, ...own, [portVariable]: port };
    launchers.set(name, () => launch(name, vars, port));
    await launch(name, vars, port);
    return port;
  };
  const known = (name: string) => {
    const service = services.find((s) => s.name === name);
    const launcher = launchers.get(name);
    if (!service || !launcher) throw new Error(`no service ${name} in this deployment`);
    return { service, launcher };
  };
  try {
    await start('reporting-projection', { REPORTING_PUBLISH_INTERVAL_MS: options.publishIntervalMs }, 'REPORTING_HTTP_PORT');
    await start('payouts-read', {}, 'PAYOUTS_HTTP_PORT');
    await start('timezone-settings', {}, 'TIMEZONE_HTTP_PORT');
    const gatewayPort = await start('gateway', { TRACKING_SIGNING_SECRET: `bench-${options.name}-tracking-signing-secret` }, 'PORT');
    return {
      services,
      base: `http://127.0.0.1:${gatewayPort}`,
      stop,
      stopService: (name) => known(name).service.child.stop(),
      startService: async (name) => {
        const { service, launcher } = known(name);
        if (service.child.process.exitCode === null && service.child.process.signalCode === null) throw new Error(`${name} runs already`);
        return launcher();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The platforms `agents`, each with one key per mode of `modes` (in that order), straight in the
 * identity schema of `databaseUrl` (the gateway has migrated it by then); `name`: the
 * connection's application name.
 */
export async function seedPlatforms(databaseUrl: string, agents: string[], modes: KeyMode[], name: string): Promise<CreatedKey[][]> {
  const dataSource = createIdentityDataSource(databaseUrl, 2, name);
  await dataSource.initialize();
  const identity = new IdentityRepository(dataSource);
  const keys: CreatedKey[][] = [];
  for (const agent of agents) {
    await identity.createPlatform(agent);
    const own: CreatedKey[] = [];
    for (const mode of modes) own.push(await identity.createKey(agent, mode));
    keys.push(own);
  }
  await dataSource.destroy();
  return keys;
}
