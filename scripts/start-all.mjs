#!/usr/bin/env node
// Developer launcher behind `npm start` (DESIGN §2). In order:
//
// 1. Reads every service's configuration once (the services' own env classes from dist/), so a
//    bad variable is one clear line before anything starts.
// 2. Makes NATS, PostgreSQL and Redis available (#libs/servers, shared with the tests): each
//    that answers at its URL (NATS_URL, DATABASE_URL, REDIS_URL) is used; each that does not,
//    when the URL is on this machine and the server's program is installed, is started
//    privately on that address with its data under .data/ (LAUNCHER_DATA_DIR), kept across
//    runs. One that is neither → one line each (URL, why, how to get it), exit 1, nothing
//    started.
// 3. Starts every service as its own child process with the same environment, passing their
//    output through untouched (JSON lines with a `service` field), and prints one ready line
//    with the URLs once every service answers GET /health/ready with 200.
// 4. Stops everything together: SIGTERM / SIGINT / SIGHUP are forwarded once to every service;
//    when all have exited, the private servers are stopped gracefully (JetStream and
//    PostgreSQL flush their data). Exit 0 when each service ended cleanly, 1 otherwise. A second
//    signal is forwarded too, which ends a service that is still draining at once.
//
// A service that exits while nobody asked it to is reported, the others are stopped and the
// launcher exits 1. It restarts nothing: in production Kubernetes supervises each service on
// its own (`node dist/apps/<service>/src/main.js`), and the services retry their connections.
// `node scripts/start-all.mjs gateway payouts-read` starts only the named services.
//
// The launcher speaks plain lines for a person; the services log JSON. Plain ESM; the shared
// code comes from the build (`#libs/*` resolves to dist/), which `npm start` runs first.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Each service, its env class (its defaults and validation) and the variable of its HTTP port. */
const SERVICES = [
  { name: 'gateway', env: ['config/gateway.env.js', 'GatewayEnv'], portVariable: 'PORT' },
  { name: 'reporting-projection', env: ['config/reporting-projection.env.js', 'ReportingProjectionEnv'], portVariable: 'REPORTING_HTTP_PORT' },
  { name: 'payouts-read', env: ['config/payouts-read.env.js', 'PayoutsReadEnv'], portVariable: 'PAYOUTS_HTTP_PORT' },
  { name: 'timezone-settings', env: ['config/timezone-settings.env.js', 'TimezoneSettingsEnv'], portVariable: 'TIMEZONE_HTTP_PORT' },
  { name: 'recommendations', env: ['config/recommendations.env.js', 'RecommendationsEnv'], portVariable: 'RECOMMENDATIONS_HTTP_PORT' },
];

function say(line) {
  process.stdout.write(`${line}\n`);
}
function complain(line) {
  process.stderr.write(`${line}\n`);
}

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !SERVICES.some((s) => s.name === name));
if (unknown.length > 0) {
  complain(`unknown service(s): ${unknown.join(', ')}; known: ${SERVICES.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
const selected = requested.length > 0 ? SERVICES.filter((s) => requested.includes(s.name)) : SERVICES;
const serviceDir = (name) => join(root, 'dist', 'apps', name, 'src');

const missing = selected.map((s) => join(serviceDir(s.name), 'main.js')).filter((script) => !existsSync(script));
if (missing.length > 0 || !existsSync(join(root, 'dist', 'libs', 'servers'))) {
  complain(`${missing.map((script) => relative(root, script)).join(', ') || 'dist/libs'} not found: run npm run build first`);
  process.exit(1);
}

const { ConfigError, ServerEnv, loadEnv } = await import('#libs/config');
const { describeServerOutcome, privateNatsSettings, provideLocalServers } = await import('#libs/servers');

// 1. Configuration, once, before anything starts.
const services = [];
let serverEnv;
try {
  serverEnv = loadEnv(ServerEnv);
  for (const service of selected) {
    const [file, className] = service.env;
    const envClass = (await import(pathToFileURL(join(serviceDir(service.name), file)).href))[className];
    const env = loadEnv(envClass);
    services.push({ ...service, script: join(serviceDir(service.name), 'main.js'), port: env[service.portVariable], host: env.HOST });
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  complain(`invalid configuration: ${error.problems.join('; ')}`);
  process.exit(1);
}

let stopping = false;
let exitCode = 0;
/** @type {Awaited<ReturnType<typeof provideLocalServers>> | undefined} */
let servers;
/** @type {Map<string, import('node:child_process').ChildProcess>} */
const running = new Map();

// Never leave servers or detached children behind, whatever ends the launcher.
process.on('exit', () => {
  for (const child of running.values()) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  servers?.stopNow();
});

let signalsReceived = 0;
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => {
    signalsReceived += 1;
    stopping = true;
    const forwarded = signal === 'SIGHUP' ? 'SIGTERM' : signal;
    if (running.size === 0) return; // before the services started, or while the servers stop
    if (signalsReceived === 1) say(`${signal} received: stopping ${running.size} service(s)`);
    else say(`${signal} received again: forwarding ${forwarded} to ${[...running.keys()].join(', ')}`);
    stopAll(forwarded);
  });
}

// 2. NATS, PostgreSQL, Redis.
const dataDir = resolve(root, process.env.LAUNCHER_DATA_DIR || '.data');
// With NATS passwords given (DESIGN §8), a private nats-server runs with the project's users.
servers = await provideLocalServers({
  urls: { nats: serverEnv.NATS_URL, postgres: serverEnv.DATABASE_URL, redis: serverEnv.REDIS_URL },
  dataDir,
  nats: privateNatsSettings(process.env, join(root, 'deploy', 'nats', 'nats-server.conf')),
});
if (!servers.ok) {
  // Only what is wrong: any server started meanwhile has been stopped again.
  for (const outcome of servers.outcomes.filter((o) => o.state === 'failed')) complain(describeServerOutcome(outcome, root));
  process.exit(1);
}
for (const outcome of servers.outcomes) say(describeServerOutcome(outcome, root));
if (stopping) await finish();

// Hook — the development identity provider (DESIGN §2) starts here in a later round: only when
// no OIDC_* variable is set, after the servers and before the services; it adds OIDC_ISSUER,
// OIDC_AUDIENCE, OIDC_JWKS_URL (and OIDC_CLIENT_ID) to `childEnv`, prints its sign-in URL, and
// is stopped in finish() after the services, like the servers.
const childEnv = { ...process.env };

// 3. The services.
const shutdownTimeoutMs = Number(process.env.SHUTDOWN_TIMEOUT_MS) > 0 ? Number(process.env.SHUTDOWN_TIMEOUT_MS) : 10000;
/** Backstop after the services' own shutdown timeout: then the launcher kills what is left. */
const KILL_AFTER_MS = shutdownTimeoutMs + 5000;
let killTimer;

function stopAll(signal) {
  for (const [name, child] of running) {
    try {
      child.kill(signal);
    } catch (error) {
      complain(`could not signal ${name}: ${error.message}`);
    }
  }
  if (!killTimer) {
    killTimer = setTimeout(() => {
      for (const [name, child] of running) {
        complain(`${name} did not stop within ${KILL_AFTER_MS} ms: killing it`);
        exitCode = 1;
        child.kill('SIGKILL');
      }
    }, KILL_AFTER_MS);
    killTimer.unref();
  }
}

async function finish() {
  clearTimeout(killTimer);
  const started = servers.outcomes.filter((outcome) => outcome.state === 'started');
  if (started.length > 0) {
    await servers.stop();
    say(`stopped the private servers (data kept in ${dataDir.startsWith(`${root}/`) ? relative(root, dataDir) : dataDir})`);
  }
  say(exitCode === 0 ? 'all stopped' : 'stopped after a failure');
  process.exit(exitCode);
}

function onChildExit(service, child, code, signal) {
  if (!running.has(service.name)) return; // 'error' and 'exit' can both fire
  running.delete(service.name);
  if (stopping) {
    // Nest re-raises the signal it stopped on, so a clean stop may end "by" SIGTERM/SIGINT.
    const clean = code === 0 || signal === 'SIGTERM' || signal === 'SIGINT';
    if (!clean) {
      exitCode = 1;
      complain(`${service.name} stopped with ${signal ?? `exit code ${code}`}`);
    }
  } else {
    exitCode = 1;
    stopping = true;
    complain(`${service.name} exited unexpectedly (${signal ?? `exit code ${code}`}): stopping the other services`);
    stopAll('SIGTERM');
  }
  if (running.size === 0) void finish();
}

/**
 * DESIGN §8: with NATS_PASSWORD_<SERVICE> set (e.g. NATS_PASSWORD_REPORTING_PROJECTION), the
 * service connects as its own NATS user; otherwise it keeps NATS_USER / NATS_PASSWORD as given
 * (none: anonymous, a developer's open NATS).
 */
function natsIdentityEnv(name) {
  const password = process.env[`NATS_PASSWORD_${name.toUpperCase().replace(/-/g, '_')}`];
  return password ? { NATS_USER: name, NATS_PASSWORD: password, NATS_CREDS: '' } : {};
}

for (const service of services) {
  const child = spawn(process.execPath, [service.script], {
    cwd: root,
    env: { ...childEnv, ...natsIdentityEnv(service.name) },
    stdio: ['ignore', 'inherit', 'inherit'],
    // Own process group: a Ctrl-C in the terminal reaches the launcher only, which forwards it
    // exactly once (a second SIGINT would end a draining Nest process at once).
    detached: true,
  });
  running.set(service.name, child);
  child.once('error', (error) => {
    complain(`${service.name} could not be started: ${error.message}`);
    onChildExit(service, child, null, null);
  });
  child.once('exit', (code, signal) => onChildExit(service, child, code, signal));
}
say(`started ${services.map((s) => `${s.name} (pid ${running.get(s.name)?.pid})`).join(', ')}`);

// 4. One ready line once every service is ready.
const local = (host) => (host === '0.0.0.0' || host === '::' || !host ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host);
const baseUrl = (service) => `http://${local(service.host)}:${service.port}`;

async function isReady(service) {
  try {
    const response = await fetch(`${baseUrl(service)}/health/ready`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

function readyLine() {
  const gateway = services.find((s) => s.name === 'gateway');
  if (!gateway) return `ready: ${services.map((s) => `${s.name} ${baseUrl(s)}/metrics`).join(', ')}`;
  const api = baseUrl(gateway);
  const parts = [`API ${api}`, `docs ${api}/docs`, `metrics ${api}/metrics`];
  if (existsSync(join(root, 'dist', 'dashboard'))) parts.push(`dashboard ${api}/dashboard/`);
  return `ready: ${parts.join('  ')}`;
}

const waitingSince = Date.now();
let waitingNoted = false;
for (;;) {
  if (stopping) break;
  const ready = await Promise.all(services.map(isReady));
  if (stopping) break;
  if (ready.every(Boolean)) {
    say(readyLine());
    break;
  }
  if (!waitingNoted && Date.now() - waitingSince > 30000) {
    waitingNoted = true;
    const waiting = services.filter((_, i) => !ready[i]).map((s) => `${s.name} (${baseUrl(s)}/health/ready)`);
    say(`still waiting for ${waiting.join(', ')}; their log lines above say why`);
  }
  await new Promise((r) => setTimeout(r, 250));
}
