import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadEnv } from '#libs/config';
import { createRedis } from '#libs/bootstrap';
import { NatsClient } from '#libs/nats';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { startReportingProjection, type ServiceUnderTest } from '../support/apps.js';
import { freePort, newTestDatabase, waitFor, type TestDatabase } from '../support/servers.js';

/**
 * TLS to NATS and Redis as the production overlay runs them (deploy/k8s/overlays/prod): a
 * throwaway CA made with openssl, a private nats-server that requires TLS and a private
 * redis-server that speaks only TLS, both with a certificate of that CA. A service given the CA
 * (NATS_TLS_CA_FILE, REDIS_TLS_CA_FILE, a rediss:// REDIS_URL) connects and is ready; a client
 * without the CA, or trusting another one, is refused; a CA path that does not exist stops the
 * service at start with a line that names the setting.
 */

let dir: string;
let natsPort: number;
let redisPort: number;
const servers: ChildProcess[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA (`<name>.crt`, `<name>.key`) and, signed by it, a certificate for 127.0.0.1 and localhost. */
function makeCa(name: string): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '1', '-subj', `/CN=${name}`);
}

function makeServerCertificate(ca: string, name: string, commonName = 'localhost', extensions = 'server.ext'): void {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${commonName}`);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', extensions);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function startServer(program: string, args: string[], port: number): Promise<void> {
  const child = spawn(program, args, { cwd: dir, stdio: 'ignore' });
  servers.push(child);
  await waitFor(() => listening(port), { timeoutMs: 15000, what: `${program} on ${port}` });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weave-tls-'));
  await writeFile(join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  makeCa('ca');
  makeCa('other-ca');
  makeServerCertificate('ca', 'server');
  // Route certificates are used both ways (server and client auth), as nats-route-tls in production.
  await writeFile(join(dir, 'route.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  makeServerCertificate('ca', 'route', 'nats-route', 'route.ext');
  makeServerCertificate('ca', 'intruder', 'nats-intruder', 'route.ext');
  natsPort = await freePort();
  await writeFile(
    join(dir, 'nats.conf'),
    `listen: 127.0.0.1:${natsPort}\njetstream { store_dir: "${join(dir, 'js')}" }\ntls { cert_file: "server.crt", key_file: "server.key", timeout: 2 }\n`,
  );
  await startServer('nats-server', ['-c', join(dir, 'nats.conf')], natsPort);
  redisPort = await freePort();
  await startServer(
    'redis-server',
    ['--port', '0', '--tls-port', String(redisPort), '--bind', '127.0.0.1', '--tls-cert-file', 'server.crt', '--tls-key-file', 'server.key', '--tls-ca-cert-file', 'ca.crt', '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no'],
    redisPort,
  );
});

afterAll(async () => {
  for (const child of servers) child.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

describe('NATS over TLS', () => {
  it('connects with the CA (NATS_TLS_CA_FILE) and exchanges messages', async () => {
    const nats = await NatsClient.connect({ servers: [`tls://127.0.0.1:${natsPort}`], name: 'tls-test', tls: { caFile: join(dir, 'ca.crt') } });
    try {
      expect(nats.connection.info?.tls_required).toBe(true);
      const sub = nats.connection.subscribe('tls.check', { max: 1 });
      nats.connection.publish('tls.check', 'hello');
      for await (const message of sub) expect(message.string()).toBe('hello');
    } finally {
      await nats.drain();
    }
  });

  it('is refused without the CA, and with a CA that did not sign the server certificate', async () => {
    for (const tls of [undefined, { caFile: join(dir, 'other-ca.crt') }]) {
      await expect(NatsClient.connect({ servers: [`nats://127.0.0.1:${natsPort}`], name: 'tls-test', tls })).rejects.toThrow(/certificate|self.signed|verify/i);
    }
  });
});

describe('NATS routes: TLS both ways, admitted by certificate subject (deploy/k8s/overlays/prod/nats-values.yaml)', () => {
  it('forms a route between two servers with the route certificate and refuses a server whose certificate of the same CA has another subject', async () => {
    const ports = await Promise.all(Array.from({ length: 9 }, () => freePort()));
    const server = (name: string, index: number, certificate: string, peer: number) => {
      const [client, route, monitor] = ports.slice(index * 3, index * 3 + 3);
      const conf = [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${client}`,
        `http: 127.0.0.1:${monitor}`,
        'cluster {',
        '  name: weave',
        `  listen: 127.0.0.1:${route}`,
        `  routes: [ "tls://127.0.0.1:${peer}" ]`,
        // as nats-values.yaml: config.cluster.merge.authorization and config.cluster.tls.merge
        '  authorization { user: "CN=nats-route" }',
        `  tls { cert_file: "${certificate}.crt", key_file: "${certificate}.key", ca_file: "ca.crt", verify_and_map: true, timeout: 3 }`,
        '}',
      ].join('\n');
      return { conf, client, route, monitor };
    };
    const a = server('a', 0, 'route', ports[4]);
    const b = server('b', 1, 'route', ports[1]);
    const intruder = server('intruder', 2, 'intruder', ports[1]);
    for (const [name, s] of Object.entries({ a, b, intruder })) {
      await writeFile(join(dir, `${name}.conf`), s.conf);
      await startServer('nats-server', ['-c', join(dir, `${name}.conf`)], s.monitor);
    }
    const routes = async (monitor: number) => ((await (await fetch(`http://127.0.0.1:${monitor}/routez`)).json()) as { num_routes: number }).num_routes;
    await waitFor(async () => (await routes(a.monitor)) === 1 && (await routes(b.monitor)) === 1, { timeoutMs: 15000, what: 'the route between a and b' });
    // The intruder keeps trying (every second); none of its attempts is admitted.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await routes(intruder.monitor)).toBe(0);
    expect(await routes(a.monitor)).toBe(1);
  });
});

describe('Redis over TLS', () => {
  it('answers a rediss:// client with the CA (REDIS_TLS_CA_FILE) and refuses one without it', async () => {
    const trusted = createRedis(`rediss://127.0.0.1:${redisPort}`, 'tls-test', { lazyConnect: true }, join(dir, 'ca.crt'));
    try {
      await trusted.connect();
      expect(await trusted.ping()).toBe('PONG');
    } finally {
      trusted.disconnect();
    }
    const untrusted = createRedis(`rediss://127.0.0.1:${redisPort}`, 'tls-test', { lazyConnect: true, retryStrategy: () => null });
    const errors: Error[] = [];
    untrusted.on('error', (error: Error) => errors.push(error));
    try {
      await expect(untrusted.connect()).rejects.toThrow();
      expect(untrusted.status).not.toBe('ready');
      expect(errors.map((e) => e.message).join('\n')).toMatch(/certificate|self.signed|verify/i);
    } finally {
      untrusted.disconnect();
    }
  });
});

describe('a service with TLS settings', () => {
  let db: TestDatabase;
  let service: ServiceUnderTest<ReportingProjectionEnv> | undefined;

  afterAll(async () => {
    await service?.close();
    await db?.drop();
  });

  it('connects to NATS and Redis over TLS and is ready', async () => {
    db = newTestDatabase();
    service = await startReportingProjection({
      natsUrl: `tls://127.0.0.1:${natsPort}`,
      databaseUrl: db.url,
      NATS_TLS_CA_FILE: join(dir, 'ca.crt'),
      REDIS_URL: `rediss://127.0.0.1:${redisPort}`,
      REDIS_TLS_CA_FILE: join(dir, 'ca.crt'),
    });
    const ready = await waitFor(
      async () => {
        const response = await fetch(`${service!.url}/health/ready`);
        return response.status === 200 && ((await response.json()) as { info: Record<string, { status: string }> });
      },
      { timeoutMs: 20000, what: 'readiness' },
    );
    expect(ready.info).toEqual(expect.objectContaining({ nats: { status: 'up' }, redis: { status: 'up' }, postgres: { status: 'up' } }));
  });

  it('refuses to start when a CA file does not exist, naming the setting', () => {
    const missing = join(dir, 'no-such-ca.crt');
    const problems = (source: Record<string, string>) => {
      try {
        loadEnv(ReportingProjectionEnv, source);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ NATS_TLS_CA_FILE: missing })).toEqual([expect.stringMatching(/^NATS_TLS_CA_FILE: .*no-such-ca\.crt/)]);
    expect(problems({ NATS_TLS_CA_FILE: join(dir, 'ca.crt'), NATS_TLS_CERT_FILE: join(dir, 'server.crt') })).toEqual([expect.stringMatching(/^NATS_TLS_KEY_FILE: .*must be set with NATS_TLS_CERT_FILE/)]);
    expect(problems({ REDIS_URL: 'rediss://127.0.0.1:1', REDIS_TLS_CA_FILE: missing })).toEqual([expect.stringMatching(/^REDIS_TLS_CA_FILE: .*no-such-ca\.crt/)]);
    expect(problems({ REDIS_TLS_CA_FILE: join(dir, 'ca.crt') })).toEqual([expect.stringMatching(/^REDIS_TLS_CA_FILE: .*rediss:\/\//)]);
    expect(problems({ DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_ROOT_CERT: missing })).toEqual([expect.stringMatching(/^DATABASE_SSL_ROOT_CERT: .*no-such-ca\.crt/)]);
    expect(problems({ DATABASE_SSL_MODE: 'require' })).toEqual([expect.stringMatching(/^DATABASE_SSL_MODE: /)]);
    expect(problems({ NATS_TLS_CA_FILE: join(dir, 'ca.crt'), REDIS_URL: 'rediss://127.0.0.1:1', REDIS_TLS_CA_FILE: join(dir, 'ca.crt'), DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_ROOT_CERT: join(dir, 'ca.crt') })).toEqual([]);
  });

  it('a service process given a missing CA file prints the setting and exits 1 before connecting', () => {
    let failure: { status: number; stderr: string } | undefined;
    try {
      execFileSync(process.execPath, ['dist/apps/gateway/src/main.js'], {
        env: { PATH: process.env.PATH ?? '', NATS_URL: 'tls://127.0.0.1:1', NATS_TLS_CA_FILE: join(dir, 'missing-ca.crt'), DATABASE_URL: 'postgres://x@127.0.0.1:1/weave', REDIS_URL: 'redis://127.0.0.1:1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 90000, // a loaded machine takes a while to load the gateway's modules
      });
    } catch (error) {
      failure = error as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toMatch(/^gateway: invalid setting NATS_TLS_CA_FILE: .*missing-ca\.crt/m);
  });
});
