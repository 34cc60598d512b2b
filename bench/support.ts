import { cpus, totalmem } from 'node:os';
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** One line describing the machine, printed above every benchmark's figures. */
export function machine(): string {
  const cpu = cpus();
  const version = (cmd: string) => {
    try {
      return execSync(cmd, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().split('\n')[0];
    } catch {
      return 'unknown';
    }
  };
  return [
    `${cpu.length} × ${cpu[0]?.model ?? 'cpu'}`,
    `${Math.round(totalmem() / 2 ** 30)} GiB`,
    `Node ${process.version}`,
    version('nats-server --version'),
    version("psql -V | sed 's/psql (PostgreSQL) /PostgreSQL /'"),
  ].join(', ');
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The middle value (the upper one of an even count), as percentile(…, 50) of the sorted values. */
export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A numeric setting of a benchmark: the environment variable `name`, or `fallback` when it is not set. */
export const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system) process `pid` has used so far, from /proc/<pid>/stat (Linux). */
export function processCpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which is in parentheses and may hold spaces): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}
