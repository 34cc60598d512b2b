import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path of `name` on PATH (or `name` itself when it is a path), or undefined. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name.includes('/')) return isExecutable(name) ? name : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** A server program: from its override variable (e.g. NATS_SERVER_BIN) if set, else from PATH. */
export function findProgram(name: string, overrideVariable: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findOnPath(env[overrideVariable] || name, env);
}

export interface PostgresBinaries {
  /** The directory holding initdb, pg_ctl and postgres; undefined when none was found. */
  binDir?: string;
  /** Where it looked, for the message when nothing was found. */
  searched: string[];
}

function versionDirs(root: string, pattern: RegExp, bin: (entry: string) => string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((entry) => ({ entry, version: Number(pattern.exec(entry)?.[1]) }))
    .filter(({ version }) => Number.isFinite(version) && version > 0)
    .sort((a, b) => b.version - a.version)
    .map(({ entry }) => bin(entry));
}

/**
 * PostgreSQL's server programs (initdb, pg_ctl). PG_BIN_DIR when set (and nothing else then);
 * otherwise PATH, then the usual places packages put them without adding them to PATH: Debian
 * and Ubuntu /usr/lib/postgresql/<version>/bin, RHEL /usr/pgsql-<version>/bin, Homebrew's
 * keg-only postgresql@<version>. The newest version wins.
 */
export function findPostgresBinaries(env: NodeJS.ProcessEnv = process.env): PostgresBinaries {
  const complete = (dir: string) => isExecutable(join(dir, 'initdb')) && isExecutable(join(dir, 'pg_ctl'));
  if (env.PG_BIN_DIR) {
    return complete(env.PG_BIN_DIR) ? { binDir: env.PG_BIN_DIR, searched: [env.PG_BIN_DIR] } : { searched: [`PG_BIN_DIR=${env.PG_BIN_DIR}`] };
  }
  const onPath = findOnPath('initdb', env);
  if (onPath && complete(join(onPath, '..'))) return { binDir: join(onPath, '..'), searched: ['PATH'] };
  const candidates = [
    ...versionDirs('/usr/lib/postgresql', /^(\d+)$/, (v) => join('/usr/lib/postgresql', v, 'bin')),
    ...versionDirs('/usr', /^pgsql-(\d+)$/, (d) => join('/usr', d, 'bin')),
    ...['/opt/homebrew/opt', '/usr/local/opt'].flatMap((root) => versionDirs(root, /^postgresql@(\d+)$/, (d) => join(root, d, 'bin'))),
  ];
  const binDir = candidates.find(complete);
  return binDir ? { binDir, searched: ['PATH', binDir] } : { searched: ['PATH', '/usr/lib/postgresql/*/bin', '/usr/pgsql-*/bin', 'Homebrew postgresql@*'] };
}
