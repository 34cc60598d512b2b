import { randomBytes } from 'node:crypto';
import { probeNats } from './probes.js';
import { ServerProcess } from './server-process.js';

export interface NatsServerOptions {
  /** Listen address; default 127.0.0.1. */
  host?: string;
  port: number;
  /** JetStream store directory (file storage: it survives restarts). */
  storeDir: string;
  /** The nats-server program; default `nats-server` on PATH. */
  program?: string;
  logFile?: string;
  /** A configuration file (`-c`), e.g. deploy/nats/nats-server.conf; it turns JetStream on itself. */
  configFile?: string;
  /** Extra environment of the server (the users' passwords a configuration file reads). */
  env?: Record<string, string>;
  /** The user the readiness probe connects as, when the configuration refuses anonymous clients. */
  probe?: { user: string; pass: string };
  /** Monitoring port (`-m`). */
  monitorPort?: number;
  /**
   * A member of a cluster: its server name (unique in the cluster, as JetStream requires), the
   * cluster's name, its own route port and the route URLs of the others (`nats://host:port`).
   */
  cluster?: { serverName: string; name: string; port: number; routes: string[] };
  detached?: boolean;
}

/**
 * A nats-server with JetStream on, its own port and store directory. It has a server name (the
 * cluster member's, or one of its own), by which the readiness probe knows it from another
 * server on the same port.
 */
export class NatsServer extends ServerProcess {
  readonly url: string;

  constructor(options: NatsServerOptions) {
    const serverName = options.cluster?.serverName ?? `nats-${randomBytes(6).toString('hex')}`;
    const host = !options.host || options.host === 'localhost' ? '127.0.0.1' : options.host;
    const url = `nats://${host.includes(':') ? `[${host}]` : host}:${options.port}`;
    super({
      name: 'nats-server',
      program: options.program ?? 'nats-server',
      args: [
        ...(options.configFile ? ['-c', options.configFile] : ['-js']),
        '-a', host,
        '-p', String(options.port),
        '-sd', options.storeDir,
        ...(options.monitorPort ? ['-m', String(options.monitorPort)] : []),
        '--server_name', serverName,
        ...(options.cluster
          ? [
              '--cluster_name', options.cluster.name,
              '--cluster', `nats://${host.includes(':') ? `[${host}]` : host}:${options.cluster.port}`,
              '--routes', options.cluster.routes.join(','),
            ]
          : []),
        ...(options.logFile ? ['-l', options.logFile] : []),
      ],
      env: options.env,
      ready: () => probeNats(url, 1000, options.probe, serverName),
      logFile: options.logFile,
      detached: options.detached,
    });
    this.url = url;
  }
}
