/**
 * Runs a benchmark against a private PostgreSQL cluster started with the production overlay's
 * server settings (deploy/k8s/overlays/prod/cnpg-cluster.yaml, `spec.postgresql.parameters`:
 * shared_buffers 1 GB, work_mem 16 MB, max_connections 300), instead of the machine's server
 * (128 MB shared_buffers). The cluster is created in a temporary directory with the machine's
 * PostgreSQL binaries, on a free port, and removed afterwards; the benchmark runs as a child
 * process with TEST_POSTGRES_URL pointing at it, so every database it makes lives there.
 *
 * What it does not reproduce of production: TLS, the synchronous standby, the operator's
 * other defaults and a server of its own (here PostgreSQL shares the 2 cores with everything).
 *
 *   npm run bench:production-postgres -- recommend    (dist/bench/recommend.bench.js)
 *   npm run bench:production-postgres -- ingest
 *   BENCH_POSTGRES_SETTINGS='shared_buffers=512MB' overrides or adds settings (comma-separated).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { PostgresCluster, findPostgresBinaries } from '#libs/servers';
import { freePort } from '../test/support/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OVERLAY = join(ROOT, 'deploy/k8s/overlays/prod/cnpg-cluster.yaml');

/** `spec.postgresql.parameters` of the overlay's CloudNativePG Cluster. */
export async function productionSettings(): Promise<Record<string, string>> {
  const documents = parseAllDocuments(await readFile(OVERLAY, 'utf8')).map((d) => d.toJS() as { kind?: string; spec?: { postgresql?: { parameters?: Record<string, string> } } });
  const parameters = documents.find((d) => d?.kind === 'Cluster')?.spec?.postgresql?.parameters;
  if (!parameters) throw new Error(`${OVERLAY}: no Cluster with spec.postgresql.parameters`);
  const overrides = (process.env.BENCH_POSTGRES_SETTINGS ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`BENCH_POSTGRES_SETTINGS: "${pair}" is not name=value`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    });
  return { ...Object.fromEntries(Object.entries(parameters).map(([name, value]) => [name, String(value)])), ...Object.fromEntries(overrides) };
}

async function main() {
  const name = process.argv[2];
  if (!name || !/^[a-z-]+$/.test(name)) {
    console.error('usage: npm run bench:production-postgres -- <bench> (e.g. recommend, ingest)');
    process.exit(2);
  }
  const script = join(ROOT, 'dist/bench', `${name}.bench.js`);
  const settings = await productionSettings();
  const { binDir, searched } = findPostgresBinaries();
  if (!binDir) throw new Error(`no PostgreSQL binaries (initdb, pg_ctl) found; searched ${searched.join(', ')}`);
  const dir = await mkdtemp(join(tmpdir(), 'weave-bench-pg-'));
  const cluster = new PostgresCluster({ binDir, dir, port: await freePort(), settings });
  process.on('exit', () => cluster.stopNow());
  let code = 1;
  try {
    await cluster.start();
    console.log(`PostgreSQL with the production overlay's settings (${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(', ')}) on port ${cluster.port}`);
    const child = spawn(process.execPath, [script, ...process.argv.slice(3)], {
      stdio: 'inherit',
      env: { ...process.env, TEST_POSTGRES_URL: cluster.url('postgres') },
    });
    const stop = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', stop).on('SIGTERM', stop);
    code = await new Promise<number>((resolve) => child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
  } finally {
    await cluster.stop('fast').catch((error: Error) => console.error(`stopping PostgreSQL: ${error.message}`));
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(code);
}

await main();
