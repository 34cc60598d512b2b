/**
 * Ingest benchmark (issue 2): pre-publish 1,000,000 mixed events (200,000 recommendations,
 * 20 platforms, both traffics, 10% accounting) to JetStream, then measure events/s applied by
 * reporting-projection until its consumer is caught up. Beside it, the ceiling from the same
 * run: a bare consumer that fetches the same messages and does one unnest upsert per batch.
 *
 *   npm run bench:ingest            (EVENTS=200000 npm run bench:ingest for a quick run)
 */
import pg from 'pg';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { AckPolicy } from '@nats-io/jetstream';
import { Durables, Streams } from '#libs/contracts';
import { NatsClient, ensureStreams } from '#libs/nats';
import { connectProducer, newTestDatabase, startNats, startReportingProjection, waitFor } from '../test/support/index.js';
import { fmt, machine } from './support.js';

const TOTAL = Number(process.env.EVENTS ?? 1_000_000);
const RECOMMENDATIONS = Math.round(TOTAL / 5);
const PLATFORMS = 20;
const BATCH = Number(process.env.INGEST_BATCH_SIZE ?? 2000);
const CONCURRENCY = Number(process.env.INGEST_CONCURRENCY ?? 2);

function* events(): Generator<{ subject: string; id: string; payload: object }> {
  const now = Date.now();
  const lifecycleTotal = TOTAL - TOTAL / 10;
  const kinds = ['shown', 'clicked', 'engaged', 'converted'];
  let lifecycle = 0;
  let accounting = 0;
  let i = 0;
  // Per recommendation: generated, shown, then deeper levels for some, interleaved with
  // accounting entries so that one event in ten is accounting.
  while (lifecycle < lifecycleTotal || accounting < TOTAL / 10) {
    const r = i % RECOMMENDATIONS;
    const round = Math.floor(i / RECOMMENDATIONS);
    i++;
    const agent = `agent_${r % PLATFORMS}`;
    const traffic = r % 7 === 0 ? 'test' : 'live';
    const created = new Date(now - ((r * 7919) % 86_400_000)).toISOString();
    if (round < 4 && lifecycle < lifecycleTotal) {
      const kind = round === 0 ? 'generated' : kinds[Math.min(round - 1 + (r % 3 === 0 ? 1 : 0), 3)];
      const id = `evt_${round}_${r}`;
      lifecycle++;
      yield {
        subject: `events.recommendation.${kind}`,
        id,
        payload: { event_id: id, recommendation_id: `rec_${r}`, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created, billable: round === 2 },
      };
    } else if (accounting < TOTAL / 10) {
      const id = `acc_${round}_${r}`;
      accounting++;
      yield {
        subject: 'events.accounting.entry',
        id,
        payload: { entry_id: id, agent_id: agent, traffic, recommendation_id: `rec_${r}`, amount_micros: 1000 + (r % 5000), currency: r % 50 === 0 ? 'EUR' : 'USD', recorded_at: created },
      };
    } else if (lifecycle < lifecycleTotal) {
      const id = `evt_dup_${round}_${r}`;
      lifecycle++;
      yield {
        subject: 'events.recommendation.shown',
        id,
        payload: { event_id: id, recommendation_id: `rec_${r}`, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created },
      };
    }
  }
}

async function prepublish(url: string): Promise<number> {
  const producer = await connectProducer(url);
  const nats = await NatsClient.connect({ servers: [url], name: 'bench-setup' });
  await ensureStreams(nats.manager);
  await nats.drain();
  const encoder = new TextEncoder();
  const started = Date.now();
  let inFlight: Promise<unknown>[] = [];
  let count = 0;
  for (const event of events()) {
    const h = natsHeaders();
    inFlight.push(producer.js.publish(event.subject, encoder.encode(JSON.stringify(event.payload)), { msgID: event.id, headers: h }));
    count++;
    if (inFlight.length >= 2000) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  await producer.close();
  const seconds = (Date.now() - started) / 1000;
  console.log(`published ${fmt(count)} events in ${seconds.toFixed(1)} s (${fmt(count / seconds)} events/s)`);
  return count;
}

/** The ceiling: fetch the same messages and do one unnest upsert per batch, nothing else. */
async function bareConsumer(url: string, databaseUrl: string, total: number): Promise<number> {
  const nats = await NatsClient.connect({ servers: [url], name: 'bench-bare' });
  await nats.manager.consumers.add(Streams.events, { durable_name: 'bench-bare', ack_policy: AckPolicy.Explicit, max_ack_pending: 20000 });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('CREATE TABLE IF NOT EXISTS bench_bare (id text PRIMARY KEY, n bigint NOT NULL)');
  const consumer = await nats.jetstream.consumers.get(Streams.events, 'bench-bare');
  const started = Date.now();
  let seen = 0;
  while (seen < total) {
    const batch = [];
    for await (const m of await consumer.fetch({ max_messages: BATCH, expires: 1000 })) batch.push(m);
    if (batch.length === 0) continue;
    const ids = batch.map((m) => (m.json<{ recommendation_id?: string; entry_id?: string }>().recommendation_id ?? 'x'));
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO bench_bare (id, n) SELECT id, count(*) FROM unnest($1::text[]) id GROUP BY id
       ON CONFLICT (id) DO UPDATE SET n = bench_bare.n + excluded.n`,
      [ids],
    );
    await client.query('COMMIT');
    for (const m of batch) m.ack();
    seen += batch.length;
  }
  const seconds = (Date.now() - started) / 1000;
  await client.end();
  await nats.drain();
  return seen / seconds;
}

async function main() {
  console.log(`machine: ${machine()}`);
  const nats = await startNats();
  const db = newTestDatabase();
  try {
    const total = await prepublish(nats.url);
    const launched = Date.now();
    const service = await startReportingProjection({
      natsUrl: nats.url,
      databaseUrl: db.url,
      REPORTING_PUBLISH_INTERVAL_MS: 3_600_000,
      INGEST_BATCH_SIZE: BATCH,
      INGEST_CONCURRENCY: CONCURRENCY,
    });
    const started = Date.now();
    const inspector = await NatsClient.connect({ servers: [nats.url], name: 'bench-inspector' });
    let last = 0;
    await waitFor(
      async () => {
        const info = await inspector.manager.consumers.info(Streams.events, Durables.reportingProjection);
        const acked = info.ack_floor.stream_seq;
        if (acked - last >= 100_000) {
          last = acked;
          console.log(`  applied ${fmt(acked)} / ${fmt(total)} (${fmt(acked / ((Date.now() - started) / 1000))} events/s)`);
        }
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 30 * 60_000, intervalMs: 200, what: 'projection caught up' },
    );
    const seconds = (Date.now() - started) / 1000;
    const projectionRate = total / seconds;
    const rows = await service.app.get((await import('typeorm')).DataSource).query(
      `SELECT (SELECT count(*) FROM reporting.recommendation) AS recommendations,
              (SELECT count(*) FROM reporting.accounting_entry) AS entries,
              (SELECT count(*) FROM reporting.rollup_minute) AS minute_rows`,
    );
    await service.close();
    await inspector.drain();
    const ceiling = await bareConsumer(nats.url, db.url, total);
    console.log('');
    console.log(`reporting-projection: ${fmt(total)} events applied in ${seconds.toFixed(1)} s = ${fmt(projectionRate)} events/s (batch ${BATCH} in ${CONCURRENCY} concurrent partitions; start-up took ${((started - launched) / 1000).toFixed(1)} s more)`);
    console.log(`  read model: ${fmt(Number(rows[0].recommendations))} recommendations, ${fmt(Number(rows[0].entries))} accounting entries, ${fmt(Number(rows[0].minute_rows))} minute rollup rows`);
    console.log(`ceiling (bare fetch + one unnest upsert per batch): ${fmt(ceiling)} events/s`);
    console.log(`target ≥ 25,000 events/s: ${projectionRate >= 25_000 ? 'met' : 'NOT met'}`);
  } finally {
    await nats.stop();
    await db.drop();
  }
}

await main();
