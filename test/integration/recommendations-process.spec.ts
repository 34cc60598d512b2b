import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { RECOMMENDATIONS_MIGRATIONS } from '#libs/catalog-core';
import { REDIS_URL, freePort, newTestDatabase, startNats, waitFor, type TestDatabase, type TestNats } from '../support/index.js';

/**
 * The recommendations service as Kubernetes runs it (node dist/apps/recommendations/src/main.js):
 * two replicas starting at once on a database that does not exist yet create it and migrate
 * schema `recommendations` once (advisory lock), both become ready, and each stops on SIGTERM by
 * itself, before the shutdown deadline.
 */
const MAIN = resolve('dist/apps/recommendations/src/main.js');

let nats: TestNats;
let db: TestDatabase;
const children: ChildProcess[] = [];

function start(port: number): { child: ChildProcess; output: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      REDIS_URL,
      HOST: '127.0.0.1',
      RECOMMENDATIONS_HTTP_PORT: String(port),
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '10000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  return { child, output: () => output, exited };
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  nats = await startNats();
  db = newTestDatabase();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await nats?.stop();
  await db?.drop();
});

it('two replicas migrate once, become ready, and stop on SIGTERM on their own', async () => {
  const ports = [await freePort(), await freePort()];
  const replicas = ports.map((port) => start(port));
  for (const [i, port] of ports.entries()) {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200, {
      timeoutMs: 60000,
      intervalMs: 250,
      what: `replica ${i} ready`,
    }).catch((error: Error) => {
      throw new Error(`${error.message}\n${replicas[i].output().slice(-3000)}`);
    });
  }

  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    const tables = await sql.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'recommendations' ORDER BY table_name`);
    expect(tables.rows.map((r) => r.table_name)).toEqual(['ad_term_weights', 'ad_terms', 'ads', 'catalog_stats', 'lexeme_stats', 'migrations', 'outbox', 'recommendation', 'recommendation_request', 'typeorm_metadata']);
    const migrations = await sql.query(`SELECT name FROM recommendations.migrations ORDER BY id`);
    expect(migrations.rows.map((r) => r.name)).toEqual([...RECOMMENDATIONS_MIGRATIONS]);
    const generated = await sql.query(`SELECT name FROM recommendations.typeorm_metadata`);
    expect(generated.rows).toEqual([{ name: 'search_vector' }]);
  } finally {
    await sql.end();
  }

  for (const replica of replicas) replica.child.kill('SIGTERM');
  for (const [i, replica] of replicas.entries()) {
    const { code, signal } = await replica.exited;
    const output = replica.output();
    expect({ replica: i, ended: code === 0 || signal === 'SIGTERM', timedOut: output.includes('graceful shutdown timed out') }).toEqual({
      replica: i,
      ended: true,
      timedOut: false,
    });
    expect(output).toContain('shutting down');
    await expect(fetch(`http://127.0.0.1:${ports[i]}/health/live`)).rejects.toThrow();
  }
});
