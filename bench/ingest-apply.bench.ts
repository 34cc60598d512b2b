/**
 * The projection's own share of ingest, without NATS: a workload of bench:ingest
 * (bench/ingest-workloads.ts) encoded as stream messages once, then handed to ProjectionService
 * in batches in this process, one batch at a time, as the consumer does. Prints the Node and
 * PostgreSQL CPU per event of applying them, to compare changes of the write path and profile
 * it (`node --cpu-prof dist/bench/ingest-apply.bench.js`) without the consumer's and the NATS
 * server's CPU in the way.
 *
 *   npm run -s build:bench && EVENTS=200000 INGEST_WORKLOAD=streaming node dist/bench/ingest-apply.bench.js
 *   INGEST_HEAP_PROFILE=/tmp/heap …   a sampling heap profile of the applying (collected objects too)
 *   INGEST_PIDS_FILE=/tmp/pids …      the backends' pids, written after two batches (`perf record -p`)
 *   INGEST_KEEP_DATABASE=1 …          the database is kept for inspection (its URL is printed)
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { initializeDatabase } from '#libs/database';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../apps/reporting-projection/src/ingestion/projection.repository.js';
import { ProjectionService } from '../apps/reporting-projection/src/ingestion/projection.service.js';
import { StoragePartitions } from '../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { newTestDatabase } from '../test/support/index.js';
import { CpuMeter, perEvent } from './ingest-support.js';
import { backfillWorkload, streamingWorkload } from './ingest-workloads.js';
import { fmt, machine } from './support.js';

const TOTAL = Number(process.env.EVENTS ?? 200_000);
const WORKLOADS = (process.env.INGEST_WORKLOAD ?? 'streaming,backfill').split(',');
const BATCH = Number(process.env.INGEST_BATCH_SIZE ?? 2000);
const CONCURRENCY = Number(process.env.INGEST_CONCURRENCY ?? 2);

/**
 * A sampling heap profile of everything allocated from now on, collected or not (as the
 * inspector's HeapProfiler takes it); resolves to a function that stops it and returns the profile.
 */
async function startHeapSampling(): Promise<() => Promise<unknown>> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return async () => ((await post('HeapProfiler.stopSampling')) as { profile: unknown }).profile;
}

async function run(name: string): Promise<void> {
  const workload = name === 'streaming' ? streamingWorkload(TOTAL) : backfillWorkload(TOTAL);
  const encoder = new TextEncoder();
  const messages: InboundMessage[] = [];
  for (const event of workload.events()) {
    messages.push({ subject: event.subject, data: encoder.encode(JSON.stringify(event.payload)), sequence: messages.length + 1, deliveries: 1 });
  }
  const db = newTestDatabase();
  const dataSource = createReportingDataSource(db.url, 4);
  try {
    await initializeDatabase(dataSource);
    const partitions = new StoragePartitions(dataSource, Date.now);
    const service = new ProjectionService(new ProjectionRepository(dataSource, partitions), CONCURRENCY);
    const meter = new CpuMeter(db.name);
    const heapProfile = process.env.INGEST_HEAP_PROFILE ? await startHeapSampling() : undefined;
    await meter.start();
    const started = Date.now();
    let deadLetters = 0;
    for (let i = 0; i < messages.length; i += BATCH) {
      if (i === BATCH * 2 && process.env.INGEST_PIDS_FILE) {
        // The backends' pids, for `perf record -p` of PostgreSQL while the rest is applied.
        const rows = (await dataSource.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)) as { pid: number }[];
        writeFileSync(process.env.INGEST_PIDS_FILE, rows.map((row) => row.pid).join(','));
      }
      const outcomes = await service.applyBatch(messages.slice(i, i + BATCH));
      deadLetters += outcomes.filter((o) => o.kind !== 'applied').length;
    }
    const seconds = (Date.now() - started) / 1000;
    const cpu = await meter.stop();
    if (heapProfile) writeFileSync(`${process.env.INGEST_HEAP_PROFILE}-${name}.heapprofile`, JSON.stringify(await heapProfile()));
    console.log(
      `${name.padEnd(10)} ${fmt(messages.length)} events in ${seconds.toFixed(1)} s (${fmt(messages.length / seconds)} events/s); CPU per event: Node ${perEvent(cpu.node, messages.length)}, PostgreSQL ${perEvent(cpu.postgres, messages.length)}; ${deadLetters} dead letters; heap ${fmt(process.memoryUsage().heapUsed / 2 ** 20)} MB`,
    );
  } finally {
    await dataSource.destroy();
    if (process.env.INGEST_KEEP_DATABASE) console.log(`database kept: ${db.url}`);
    else await db.drop();
  }
}

console.log(`machine: ${machine()}; run ${randomUUID().slice(0, 8)}`);
for (const name of WORKLOADS) await run(name);
