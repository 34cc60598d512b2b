import { resolve } from 'node:path';
import { probeRedis } from './probes.js';
import { ServerProcess } from './server-process.js';

export interface RedisServerOptions {
  host?: string;
  port: number;
  /** Working directory (nothing is persisted: no RDB snapshots, no AOF). */
  dir: string;
  program?: string;
  logFile?: string;
  /** ACL user and password the server requires (from a REDIS_URL that carries them). */
  username?: string;
  password?: string;
  /** More settings on the command line, e.g. ACL users (`--user default off --user weave on >… ~weave:* +@all`). */
  args?: string[];
  /** The user the readiness probe authenticates as, when `args` require one. */
  probe?: { user: string; pass: string };
  detached?: boolean;
}

function withCredentials(url: string, { user, pass }: { user: string; pass: string }): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(user);
  parsed.password = encodeURIComponent(pass);
  return parsed.toString();
}

/** Quotes a value for redis.conf. */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * A redis-server of its own. It is a cache here (rate limits, nothing that must survive), so
 * it persists nothing. The configuration goes in on stdin (`redis-server -`), so a password
 * never shows in the process list.
 */
export class RedisServer extends ServerProcess {
  readonly url: string;

  constructor(options: RedisServerOptions) {
    const host = !options.host || options.host === 'localhost' ? '127.0.0.1' : options.host;
    const credentials = options.password
      ? `${encodeURIComponent(options.username ?? '')}:${encodeURIComponent(options.password)}@`
      : '';
    const url = `redis://${credentials}${host.includes(':') ? `[${host}]` : host}:${options.port}`;
    const config = [
      `port ${options.port}`,
      `bind ${host}`,
      `dir ${quoted(resolve(options.dir))}`,
      'save ""',
      'appendonly no',
      'daemonize no',
      ...(options.logFile ? [`logfile ${quoted(resolve(options.logFile))}`] : []),
      ...(options.password && options.username && options.username !== 'default'
        ? [`user ${options.username} on >${options.password} ~* &* +@all`, 'user default off']
        : options.password
          ? [`requirepass ${quoted(options.password)}`]
          : []),
      '',
    ].join('\n');
    super({
      name: 'redis-server',
      program: options.program ?? 'redis-server',
      args: ['-', ...(options.args ?? [])],
      input: config,
      ready: (pid) => probeRedis(options.probe ? withCredentials(url, options.probe) : url, 1000, pid),
      logFile: options.logFile,
      detached: options.detached,
    });
    this.url = url;
  }
}
