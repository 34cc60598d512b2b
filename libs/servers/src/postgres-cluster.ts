import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { probePostgres } from './probes.js';

const run = promisify(execFile);

export interface PostgresClusterOptions {
  /** Directory holding initdb, pg_ctl and postgres (see findPostgresBinaries). */
  binDir: string;
  /** The cluster's directory: `data/` (PGDATA) and `postgres.log` live in it. */
  dir: string;
  host?: string;
  port: number;
  /** The bootstrap superuser (trust authentication on the listen address). Default postgres. */
  superuser?: string;
  /** postgresql.conf settings written once, when the cluster is created. */
  settings?: Record<string, string | number>;
}

export type PostgresStopMode = 'smart' | 'fast' | 'immediate';

/** A value for postgresql.conf. */
function confValue(value: string | number): string {
  return typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`;
}

/**
 * A PostgreSQL cluster of its own, created on first start (initdb: trust authentication,
 * UTF8, C locale) and kept in its directory across restarts. Listen address and port are set
 * at every start (they may change between runs); no Unix socket. initdb and postgres refuse to
 * run as root, so as root the directory is handed to the `postgres` user and the programs run
 * through `runuser -u postgres --`.
 */
export class PostgresCluster {
  readonly dataDir: string;
  readonly logFile: string;
  private readonly host: string;
  private readonly superuser: string;
  private readonly asRoot = process.getuid?.() === 0;

  constructor(private readonly options: PostgresClusterOptions) {
    this.dataDir = join(options.dir, 'data');
    this.logFile = join(options.dir, 'postgres.log');
    this.host = !options.host || options.host === 'localhost' ? '127.0.0.1' : options.host;
    this.superuser = options.superuser ?? 'postgres';
  }

  get port(): number {
    return this.options.port;
  }

  /** URL of a database on this cluster (the services create theirs on first use). */
  url(database: string): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `postgres://${encodeURIComponent(this.superuser)}@${host}:${this.options.port}/${database}`;
  }

  /** Whether initdb has run in the directory. */
  exists(): boolean {
    return existsSync(join(this.dataDir, 'PG_VERSION'));
  }

  private async pg(tool: string, args: string[]): Promise<void> {
    const program = join(this.options.binDir, tool);
    try {
      await (this.asRoot ? run('runuser', ['-u', 'postgres', '--', program, ...args]) : run(program, args));
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      const said = (e.stderr ?? '').split('\n').map((l) => l.trim()).filter(Boolean).slice(-2).join(' | ');
      throw new Error(`${tool} failed: ${said || e.message}`);
    }
  }

  /** Creates the cluster when the directory has none (idempotent). */
  async init(): Promise<boolean> {
    if (this.exists()) return false;
    await mkdir(this.dataDir, { recursive: true, mode: 0o700 });
    if (this.asRoot) {
      const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
      const [uid, gid] = await Promise.all([id('-u'), id('-g')]).catch(() => {
        throw new Error('PostgreSQL refuses to run as root and there is no postgres user to run it as');
      });
      await chown(this.options.dir, uid, gid);
      await chown(this.dataDir, uid, gid);
    }
    await this.pg('initdb', ['-D', this.dataDir, '-U', this.superuser, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    const settings = { unix_socket_directories: '', log_line_prefix: '%m [%p] ', ...this.options.settings };
    await appendFile(
      join(this.dataDir, 'postgresql.conf'),
      [
        '',
        '# a private cluster (libs/servers); listen address and port: listen.conf, written at every start',
        ...Object.entries(settings).map(([name, value]) => `${name} = ${confValue(value)}`),
        "include_if_exists = 'listen.conf'",
        '',
      ].join('\n'),
    );
    return true;
  }

  /** Starts the server (creating the cluster first if needed) and waits until it answers. */
  async start(): Promise<void> {
    await this.init();
    await writeFile(join(this.dataDir, 'listen.conf'), `listen_addresses = ${confValue(this.host)}\nport = ${this.options.port}\n`, { mode: 0o644 });
    await this.pg('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '60', 'start']).catch(async (error: Error) => {
      throw new Error(`${error.message} | ${(await this.lastLogLines()) || 'no log'}`);
    });
    const deadline = Date.now() + 30000;
    while (!(await probePostgres(this.url('postgres'), 1000)).ok) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL on port ${this.options.port} did not answer: ${await this.lastLogLines()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** `fast` (default): a clean shutdown that does not wait for clients; `immediate`: a crash, recovered at the next start. */
  async stop(mode: PostgresStopMode = 'fast'): Promise<void> {
    if (!this.running()) return;
    await this.pg('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  /** The postmaster's pid from postmaster.pid, when it runs. */
  postmasterPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  running(): boolean {
    return this.postmasterPid() !== undefined;
  }

  /** Last resort when nothing can be awaited (process exit): a fast shutdown by signal. */
  stopNow(): void {
    const pid = this.postmasterPid();
    if (pid !== undefined) process.kill(pid, 'SIGINT');
  }

  log(): Promise<string> {
    return readFile(this.logFile, 'utf8').catch(() => '');
  }

  private async lastLogLines(): Promise<string> {
    return (await this.log()).split('\n').map((l) => l.trim()).filter(Boolean).slice(-2).join(' | ');
  }
}
