import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { ProbeResult } from './probes.js';

export interface ServerProcessOptions {
  /** For messages: "nats-server", "redis-server". */
  name: string;
  program: string;
  args: string[];
  /** Written to the program's stdin, then closed (e.g. a configuration with a password). */
  input?: string;
  /** Extra environment of the program (e.g. passwords a configuration file reads). */
  env?: Record<string, string>;
  /**
   * Whether the server answers yet: this process (`pid`), not another one that holds the port,
   * whose answer would hide that this one failed to bind it.
   */
  ready: (pid: number) => Promise<ProbeResult>;
  /** The server's own log file, read for the reason when it fails to start. */
  logFile?: string;
  /**
   * Own process group (default true): a Ctrl-C in the terminal then reaches only whoever
   * started it, who stops it after the services that use it.
   */
  detached?: boolean;
}

/** Last lines of text, for a failure message. */
function lastLines(text: string, count: number): string {
  return text.split('\n').map((line) => line.trim()).filter(Boolean).slice(-count).join(' | ');
}

/** A server program run as a child process (nats-server, redis-server): start, wait, stop. */
export class ServerProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(private readonly options: ServerProcessOptions) {}

  get pid(): number | undefined {
    return this.running() ? this.child?.pid : undefined;
  }

  running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the program and resolves once it answers; rejects with its own last words if it exits first. */
  async start(timeoutMs = 30000): Promise<void> {
    const { program, args, input, ready, name } = this.options;
    this.output = '';
    const child = spawn(program, args, {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: this.options.detached ?? true,
      env: { ...process.env, ...this.options.env },
    });
    this.child = child;
    // Whoever started it decides when it stops; it alone never keeps that process alive.
    child.unref();
    for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    if (input !== undefined) child.stdin?.end(input);
    let spawnError: Error | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });

    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (spawnError) throw new Error(`${name} could not be run: ${spawnError.message}`);
      if (!this.running()) throw new Error(`${name} exited at start: ${await this.lastWords()}`);
      if (child.pid !== undefined && (await ready(child.pid)).ok) return;
      if (Date.now() > deadline) {
        await this.stop('SIGKILL');
        throw new Error(`${name} did not answer within ${timeoutMs} ms: ${await this.lastWords()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Sends `signal` (SIGTERM: a clean shutdown) and waits for the process to end. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || !this.running()) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Unreferenced since start: referenced again while waiting, or the caller's process may end (exit code 13) before it.
    child.ref();
    child.kill(signal);
    await exited;
  }

  /** Sends a signal without waiting (SIGSTOP / SIGCONT freeze and thaw the server). */
  signal(signal: NodeJS.Signals): void {
    if (this.running()) this.child?.kill(signal);
  }

  /** What the server said last, from its output or its log file. */
  async lastWords(): Promise<string> {
    const log = this.options.logFile ? await readFile(this.options.logFile, 'utf8').catch(() => '') : '';
    return lastLines(`${this.output}\n${log}`, 3) || 'no output';
  }
}
