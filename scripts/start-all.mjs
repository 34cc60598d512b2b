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
//    With no OIDC settings (none of OIDC_ISSUER, OIDC_AUDIENCE, OIDC_JWKS_URL, OIDC_CLIENT_ID)
//    and the gateway among the services, it then runs the development identity provider
//    (apps/dev-identity-provider, oidc-provider) in this process on 127.0.0.1, creates the demo
//    platform with its owner if missing, and gives the services the provider's OIDC_* settings
//    (DESIGN §2). With any OIDC setting given it never starts. It is not in any container image.
// 3. Starts every service as its own child process with the same environment, passing their
//    output through untouched (JSON lines with a `service` field), and prints one ready line
//    with the URLs once every service answers GET /health/ready with 200 (and, with the
//    development identity provider, a line with the sign-in URL and the demo credentials).
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

/**
 * Each service, its env class (its defaults and validation), the variable of its HTTP port and,
 * where it has some, the module and export of the V8 flags it runs with.
 */
const SERVICES = [
  { name: 'gateway', env: ['config/gateway.env.js', 'GatewayEnv'], portVariable: 'PORT' },
  {
    name: 'reporting-projection',
    env: ['config/reporting-projection.env.js', 'ReportingProjectionEnv'],
    portVariable: 'REPORTING_HTTP_PORT',
    nodeFlags: ['config/node-flags.js', 'REPORTING_PROJECTION_NODE_FLAGS'],
    processEnv: ['config/node-flags.js', 'REPORTING_PROJECTION_PROCESS_ENV'],
  },
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

/** Any of these set: the identity provider is the operator's, never the development one. */
const OIDC_SETTINGS = ['OIDC_ISSUER', 'OIDC_AUDIENCE', 'OIDC_JWKS_URL', 'OIDC_CLIENT_ID'];
const devIdpDir = join(root, 'dist', 'apps', 'dev-identity-provider', 'src');

// 1. Configuration, once, before anything starts.
const services = [];
let serverEnv;
/** The development identity provider's settings, when it is to run. */
let devIdpEnv;
try {
  serverEnv = loadEnv(ServerEnv);
  for (const service of selected) {
    const [file, className] = service.env;
    const envClass = (await import(pathToFileURL(join(serviceDir(service.name), file)).href))[className];
    const env = loadEnv(envClass);
    const exported = async ([file, name]) => (await import(pathToFileURL(join(serviceDir(service.name), file)).href))[name];
    const nodeFlags = service.nodeFlags ? await exported(service.nodeFlags) : [];
    const processEnv = service.processEnv ? await exported(service.processEnv) : {};
    services.push({ ...service, script: join(serviceDir(service.name), 'main.js'), nodeFlags, processEnv, port: env[service.portVariable], host: env.HOST, env });
  }
  if (services.some((s) => s.name === 'gateway') && !OIDC_SETTINGS.some((name) => process.env[name]) && existsSync(join(devIdpDir, 'index.js'))) {
    const { DevIdentityProviderEnv } = await import(pathToFileURL(join(devIdpDir, 'config', 'dev-identity-provider.env.js')).href);
    devIdpEnv = loadEnv(DevIdentityProviderEnv);
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  complain(`invalid configuration: ${error.problems.join('; ')}`);
  process.exit(1);
}

let stopping = false;
let exitCode = 0;
let killTimer;
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
  // One line per server, so that none is left unmentioned; any started meanwhile has been stopped again.
  for (const outcome of servers.outcomes) {
    const line = describeServerOutcome(outcome, root);
    complain(outcome.state === 'started' ? `${line}; stopped again, as the services cannot run without the others` : line);
  }
  process.exit(1);
}
for (const outcome of servers.outcomes) say(describeServerOutcome(outcome, root));
if (stopping) await finish();

const childEnv = { ...process.env };
const local = (host) => (host === '0.0.0.0' || host === '::' || !host ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host);
const baseUrl = (service) => `http://${local(service.host)}:${service.port}`;

// The development identity provider (DESIGN §2): only without OIDC settings, after the servers
// (the demo platform needs PostgreSQL) and before the services, which get its OIDC_* settings.
// It runs in this process and is stopped in finish() after the services, like the servers.
/** @type {import('../apps/dev-identity-provider/src/index.js').DevIdentityProvider | undefined} */
let devIdp;
if (devIdpEnv) {
  devIdp = await startDevelopmentIdentityProvider(devIdpEnv);
  if (devIdp) Object.assign(childEnv, devIdp.env);
  if (stopping) await finish();
}

/**
 * Starts the provider for the gateway's origin (127.0.0.1 and localhost), with the gateway's
 * role claim, and makes sure the demo platform exists. Undefined (with a line saying why) when
 * it cannot run: the services then start without sign-in, as DESIGN §2 allows.
 */
async function startDevelopmentIdentityProvider(env) {
  let module;
  // oidc-provider warns at import that Node.js 20 is not a runtime it supports; on Node 20 it
  // serves this development flow fine (test/integration/dev-identity-provider.spec.ts and the
  // browser tests run it there), so that one line is kept from alarming a newcomer.
  const warn = console.warn;
  console.warn = (...args) => {
    if (!String(args[0]).includes('oidc-provider WARNING: Unsupported runtime')) warn(...args);
  };
  try {
    module = await import(pathToFileURL(join(devIdpDir, 'index.js')).href);
  } catch (error) {
    complain(`development identity provider not started (${error.code === 'ERR_MODULE_NOT_FOUND' ? 'oidc-provider is not installed: npm ci installs it' : error.message}); the dashboard cannot sign in`);
    return undefined;
  } finally {
    console.warn = warn;
  }
  const gateway = services.find((s) => s.name === 'gateway');
  const port = gateway.port;
  const options = {
    dashboardOrigin: [`http://127.0.0.1:${port}`, `http://localhost:${port}`],
    roleClaim: gateway.env.OIDC_ROLE_CLAIM,
    owner: env.DEV_IDP_PASSWORD ? { password: env.DEV_IDP_PASSWORD } : {},
    additionalAccounts: env.DEV_IDP_ACCOUNTS ? module.parseDevAccounts(env.DEV_IDP_ACCOUNTS) : [],
  };
  let provider;
  try {
    provider = await module.startDevIdentityProvider({ ...options, port: env.DEV_IDP_PORT });
  } catch (error) {
    if (error.code !== 'EADDRINUSE') throw error;
    provider = await module.startDevIdentityProvider({ ...options, port: 0 });
    say(`development identity provider: port ${env.DEV_IDP_PORT} is taken (DEV_IDP_PORT), using ${new URL(provider.issuer).port}`);
  }
  try {
    const platform = await module.ensureDemoPlatform(serverEnv.DATABASE_URL);
    say(`development identity provider at ${provider.issuer} (no OIDC settings given); demo platform ${platform.agent_id} of owner ${platform.owner_uid}: ${platform.created ? 'created' : 'exists'}`);
  } catch (error) {
    // e.g. agent_demo owned by someone else: sign-in works, the dashboard shows no platform.
    say(`development identity provider at ${provider.issuer} (no OIDC settings given); the demo platform is not usable: ${error.message}`);
  }
  return provider;
}

// 3. The services.
const shutdownTimeoutMs = Number(process.env.SHUTDOWN_TIMEOUT_MS) > 0 ? Number(process.env.SHUTDOWN_TIMEOUT_MS) : 10000;
/** Backstop after the services' own shutdown timeout: then the launcher kills what is left. */
const KILL_AFTER_MS = shutdownTimeoutMs + 5000;

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
  if (devIdp) {
    await devIdp.close().catch((error) => complain(`development identity provider: ${error.message}`));
    devIdp = undefined;
  }
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
  const child = spawn(process.execPath, [...service.nodeFlags, service.script], {
    cwd: root,
    env: { ...childEnv, ...service.processEnv, ...natsIdentityEnv(service.name) },
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
    if (devIdp) {
      say(`sign in at ${devIdp.signInUrl} as ${devIdp.credentials.username} / ${devIdp.credentials.password} (development identity provider; npm run demo fills the demo platform with a week of activity)`);
    }
    break;
  }
  if (!waitingNoted && Date.now() - waitingSince > 30000) {
    waitingNoted = true;
    const waiting = services.filter((_, i) => !ready[i]).map((s) => `${s.name} (${baseUrl(s)}/health/ready)`);
    say(`still waiting for ${waiting.join(', ')}; their log lines above say why`);
  }
  await new Promise((r) => setTimeout(r, 250));
}
