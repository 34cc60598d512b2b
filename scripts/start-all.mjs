#!/usr/bin/env node
// Developer launcher behind `npm start` (DESIGN §2): runs every service of the monorepo as its
// own child process with the same environment, passes their output through untouched (they
// already log JSON lines with a `service` field) and stops them together.
//
// - SIGTERM / SIGINT / SIGHUP are forwarded once to every child; the launcher exits when all
//   have exited: 0 when each ended cleanly, 1 otherwise. A second signal is forwarded too,
//   which ends a child that is still draining at once (its handlers are gone by then).
// - A child that exits while nobody asked it to is logged, the others are stopped and the
//   launcher exits 1. It does not restart anything: in production Kubernetes supervises each
//   service on its own (`node dist/apps/<service>/src/main.js`).
// - `node scripts/start-all.mjs gateway payouts-read` starts only the named services.
//
// Plain ESM, no dependencies. Expects `npm run build` to have produced dist/.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Each service and the variable that holds its HTTP port (defaults live in the services). */
const SERVICES = [
  { name: 'gateway', portVariable: 'PORT' },
  { name: 'reporting-projection', portVariable: 'REPORTING_HTTP_PORT' },
  { name: 'payouts-read', portVariable: 'PAYOUTS_HTTP_PORT' },
  { name: 'timezone-settings', portVariable: 'TIMEZONE_HTTP_PORT' },
  { name: 'recommendations', portVariable: 'RECOMMENDATIONS_HTTP_PORT' },
];

const shutdownTimeoutMs = Number(process.env.SHUTDOWN_TIMEOUT_MS) > 0 ? Number(process.env.SHUTDOWN_TIMEOUT_MS) : 10000;
/** Backstop after the services' own shutdown timeout: then the launcher kills what is left. */
const KILL_AFTER_MS = shutdownTimeoutMs + 5000;

/** Launcher lines have the shape of the services' pino lines. */
function log(level, msg, fields = {}) {
  const line = JSON.stringify({ level, time: new Date().toISOString(), service: 'launcher', ...fields, msg });
  (level === 'info' ? process.stdout : process.stderr).write(`${line}\n`);
}

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !SERVICES.some((s) => s.name === name));
if (unknown.length > 0) {
  log('error', `unknown service(s): ${unknown.join(', ')}`, { known: SERVICES.map((s) => s.name) });
  process.exit(2);
}
const selected = requested.length > 0 ? SERVICES.filter((s) => requested.includes(s.name)) : SERVICES;

const services = selected.map((s) => ({ ...s, script: join(root, 'dist', 'apps', s.name, 'src', 'main.js') }));
const missing = services.filter((s) => !existsSync(s.script));
if (missing.length > 0) {
  for (const s of missing) log('error', `${relative(root, s.script)} not found; run npm run build`, { child: s.name });
  process.exit(1);
}

/** @type {Map<string, import('node:child_process').ChildProcess>} */
const running = new Map();
let stopping = false;
let failed = false;
let killTimer;

function stopAll(signal) {
  for (const [name, child] of running) {
    try {
      child.kill(signal);
    } catch (error) {
      log('warn', `could not signal ${name}`, { child: name, err: error.message });
    }
  }
  if (!killTimer) {
    killTimer = setTimeout(() => {
      for (const [name, child] of running) {
        log('error', `${name} did not stop within ${KILL_AFTER_MS} ms; killing it`, { child: name, pid: child.pid });
        failed = true;
        child.kill('SIGKILL');
      }
    }, KILL_AFTER_MS);
    killTimer.unref();
  }
}

function onChildExit(service, child, code, signal) {
  if (!running.has(service.name)) return; // 'error' and 'exit' can both fire
  running.delete(service.name);
  const fields = { child: service.name, pid: child.pid, code, signal };
  if (stopping) {
    // Nest re-raises the signal it stopped on, so a clean stop may end "by" SIGTERM/SIGINT.
    const clean = code === 0 || signal === 'SIGTERM' || signal === 'SIGINT';
    if (!clean) failed = true;
    log(clean ? 'info' : 'error', `${service.name} stopped`, fields);
  } else {
    failed = true;
    stopping = true;
    log('error', `${service.name} exited unexpectedly; stopping the other services`, fields);
    stopAll('SIGTERM');
  }
  if (running.size === 0) {
    clearTimeout(killTimer);
    log(failed ? 'error' : 'info', failed ? 'stopped after a failure' : 'all services stopped');
    process.exit(failed ? 1 : 0);
  }
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
    env: { ...process.env, ...natsIdentityEnv(service.name) },
    stdio: ['ignore', 'inherit', 'inherit'],
    // Own process group: a Ctrl-C in the terminal reaches the launcher only, which forwards it
    // exactly once (a second SIGINT would end a draining Nest process at once).
    detached: true,
  });
  running.set(service.name, child);
  child.once('error', (error) => {
    log('error', `${service.name} could not be started`, { child: service.name, err: error.message });
    onChildExit(service, child, null, null);
  });
  child.once('exit', (code, signal) => onChildExit(service, child, code, signal));
  const port = process.env[service.portVariable];
  log('info', `started ${service.name}`, { child: service.name, pid: child.pid, ...(port ? { [service.portVariable]: port } : {}) });
}

let signalsReceived = 0;
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => {
    signalsReceived += 1;
    const forwarded = signal === 'SIGHUP' ? 'SIGTERM' : signal;
    if (signalsReceived === 1) log('info', `${signal} received; stopping ${running.size} service(s)`);
    else log('warn', `${signal} received again; forwarding ${forwarded} to ${[...running.keys()].join(', ') || 'nothing'}`);
    stopping = true;
    if (running.size === 0) return;
    stopAll(forwarded);
  });
}

// Never leave detached children behind, whatever ends the launcher.
process.on('exit', () => {
  for (const child of running.values()) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});
