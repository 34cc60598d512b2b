/**
 * Ops CLI timings: what a script calling `ops` waits for. Against a private nats-server and a
 * fresh PostgreSQL database, from the build in dist/ (`node dist/apps/ops/src/main.js`, what
 * `npm run ops` runs after its stale-build check):
 *
 *   - one command, cold (a new process each time): `key create`, `platform create` (the
 *     identity schema and a NATS announcement), `ads list` and `ads import` of
 *     catalog/sample-catalog.json (the recommendations catalog; every run after the first finds
 *     each ad unchanged) and `--help` (the parser alone), the median of RUNS;
 *   - four `key create` at once (a script fanning out), the wall time of the slowest;
 *   - `ops batch` of KEYS key creations from stdin (one process, one connection of each kind);
 *   - the ceiling: `node -e 0`, Node's own start, measured in the same run.
 *
 * Beside each wall time, the CPU time (user + system) of the process, which contention on a
 * shared machine inflates far less than the wall time: each child reports its own
 * process.cpuUsage() at exit (a preload given with --import), on a pipe of its own.
 *
 *   npm run bench:ops           (RUNS=7 KEYS=1000 are the defaults)
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { newTestDatabase, startNats } from '../test/support/index.js';
import { fmt, machine, median, setting } from './support.js';

const RUNS = setting('RUNS', 7);
const KEYS = setting('KEYS', 1000);
const CLI = resolve('dist/apps/ops/src/main.js');
const SAMPLE_CATALOG = resolve('catalog/sample-catalog.json');

// Writes the process's CPU time (µs, user + system) on file descriptor 3 when it exits.
const CPU_REPORT = `data:text/javascript,${encodeURIComponent(
  "import{writeSync}from'node:fs';process.on('exit',()=>{const u=process.cpuUsage();try{writeSync(3,String(u.user+u.system))}catch{}})",
)}`;

interface Timing {
  ms: number;
  cpuMs: number;
}

/** Runs node with `args`; resolves with its wall and CPU time in milliseconds, rejects on a non-zero exit. */
function timed(args: string[], env: NodeJS.ProcessEnv): Promise<Timing> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', CPU_REPORT, ...args], { env, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let cpu = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    (child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8').on('data', (chunk: string) => (cpu += chunk));
    child.once('error', fail);
    child.once('close', (code) => {
      if (code !== 0) fail(new Error(`${args.join(' ')}: exit ${code}: ${stderr}`));
      else done({ ms: performance.now() - started, cpuMs: Number(cpu) / 1000 });
    });
  });
}

async function medianOf(args: string[], env: NodeJS.ProcessEnv): Promise<Timing> {
  const runs: Timing[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await timed(args, env));
  return { ms: median(runs.map((r) => r.ms)), cpuMs: median(runs.map((r) => r.cpuMs)) };
}

async function batch(lines: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; ok: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'batch'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stdin.end(lines.join('\n'));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  const ms = performance.now() - started;
  const ok = out.split('\n').filter((line) => line.includes('"ok":true')).length;
  if (code !== 0) throw new Error(`ops batch exited ${code}`);
  return { ms, ok };
}

async function main(): Promise<void> {
  const nats = await startNats();
  const db = newTestDatabase();
  const env = { ...process.env, DATABASE_URL: db.url, NATS_URL: nats.url };
  try {
    console.log(`ops CLI bench, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(machine());
    // Creates the database, runs the migrations: not part of any figure.
    await timed([CLI, 'platform', 'create', '--agent-id', 'agent_bench_ops'], env);
    await timed([CLI, 'ads', 'import', '--file', SAMPLE_CATALOG], env);

    const ceiling = await medianOf(['-e', '0'], env);
    const rows: [string, Timing][] = [
      ['node -e 0 (ceiling)', ceiling],
      ['ops --help', await medianOf([CLI, '--help'], env)],
      ['ops platform create', await medianOf([CLI, 'platform', 'create', '--agent-id', 'agent_bench_ops'], env)],
      ['ops key create', await medianOf([CLI, 'key', 'create', '--agent-id', 'agent_bench_ops', '--mode', 'test'], env)],
      ['ops key audit', await medianOf([CLI, 'key', 'audit', '--agent-id', 'agent_bench_ops'], env)],
      ['ops ads list', await medianOf([CLI, 'ads', 'list'], env)],
      ['ops ads import (sample, unchanged)', await medianOf([CLI, 'ads', 'import', '--file', SAMPLE_CATALOG], env)],
    ];
    const fourAtOnce: Timing[] = [];
    for (let i = 0; i < Math.max(1, Math.floor(RUNS / 2)); i++) {
      const started = performance.now();
      const four = await Promise.all(Array.from({ length: 4 }, () => timed([CLI, 'key', 'create', '--agent-id', 'agent_bench_ops', '--mode', 'test'], env)));
      fourAtOnce.push({ ms: performance.now() - started, cpuMs: four.reduce((sum, t) => sum + t.cpuMs, 0) });
    }
    rows.push(['4 × ops key create at once (all done)', { ms: median(fourAtOnce.map((t) => t.ms)), cpuMs: median(fourAtOnce.map((t) => t.cpuMs)) }]);
    console.log(`${'what'.padEnd(40)} ${'wall'.padStart(10)}   ${'× ceiling'.padStart(9)}   ${'CPU'.padStart(9)}   × ceiling`);
    for (const [what, { ms, cpuMs }] of rows) {
      console.log(
        `${what.padEnd(40)} ${fmt(ms).padStart(7)} ms   ${(ms / ceiling.ms).toFixed(1).padStart(9)}   ${fmt(cpuMs).padStart(6)} ms   ${(cpuMs / ceiling.cpuMs).toFixed(1)}`,
      );
    }

    const lines = Array.from({ length: KEYS }, () => JSON.stringify({ command: 'key create', agent_id: 'agent_bench_ops', mode: 'test' }));
    const result = await batch(lines, env);
    if (result.ok !== KEYS) throw new Error(`ops batch created ${result.ok} keys of ${KEYS}`);
    console.log(`ops batch, ${fmt(KEYS)} key creations`.padEnd(40), `${fmt(result.ms).padStart(7)} ms   ${fmt((KEYS * 1000) / result.ms)} keys/s`);
    console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await db.drop();
    await nats.stop();
  }
}

await main();
