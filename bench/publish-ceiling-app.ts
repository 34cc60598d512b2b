/**
 * The ceiling of the tracking path's architecture, for bench/tracking.bench.ts: a plain Fastify
 * server whose one route publishes one event to JetStream (a stream of its own, stored as EVENTS
 * is: file storage, the same duplicate window, a Nats-Msg-Id per event), waits for the PubAck
 * and answers 204. No NestJS, no token, no Redis, no identity lookup, no metrics, no logging.
 *
 *   NATS_URL=… PORT=… node dist/bench/publish-ceiling-app.js
 */
import Fastify from 'fastify';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAM_CONFIGS } from '#libs/nats';
import { Streams } from '#libs/contracts';

export const PUBLISH_CEILING_STREAM = 'BENCH_CEILING';
const SUBJECT = 'bench.ceiling.recommendation.shown';
const encoder = new TextEncoder();

const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const port = Number(process.env.PORT ?? 3998);
const nats = await connect({ servers: natsUrl, name: 'bench-publish-ceiling', noAsyncTraces: true });
const events = STREAM_CONFIGS.find((config) => config.name === Streams.events)!;
await (await jetstreamManager(nats)).streams.add({ ...events, name: PUBLISH_CEILING_STREAM, subjects: ['bench.ceiling.>'] });
const js = jetstream(nats);

// An event the size of a tracking event (DESIGN §4), with an id of its own per request.
const createdAt = new Date().toISOString();
let sequence = 0;
const app = Fastify({ logger: false });
app.get('/ceiling', async (_request, reply) => {
  const id = `evt_shown_rec_ceiling_${process.pid}_${sequence++}`;
  const event = {
    event_id: id,
    recommendation_id: id.slice(10),
    agent_id: 'agent_bench_ceiling',
    traffic: 'live',
    recommendation_created_at: createdAt,
    occurred_at: new Date().toISOString(),
    billable: false,
    ad_id: 'ad_bench_ceiling',
    product_id: 'prod_bench_ceiling',
  };
  await js.publish(SUBJECT, encoder.encode(JSON.stringify(event)), { msgID: id, timeout: 2000 });
  return reply.code(204).send();
});
process.once('SIGTERM', () => void app.close().then(() => nats.drain()).then(() => process.exit(0)));
await app.listen({ port, host: '127.0.0.1' });
