/**
 * The ceiling of the read path's architecture, for bench/read.bench.ts: a bare NestJS-on-Fastify
 * app with one route that does one NATS request/reply, and a trivial responder. No auth, no
 * validation, no hooks, no metrics, no logging. Run as two child processes, like the gateway and
 * reporting-projection:
 *
 *   NATS_URL=… PORT=… node dist/bench/ceiling-app.js server
 *   NATS_URL=… node dist/bench/ceiling-app.js responder
 *
 * The ceiling of the recommendation path, for bench/recommend.bench.ts: the same server's
 * POST /ceiling/recommend does one NATS request/reply to a responder that records the least an
 * answer needs (the request row, three recommendation rows and one outbox row, in one PostgreSQL
 * transaction in schema `recommendations`), with no search:
 *
 *   NATS_URL=… DATABASE_URL=… node dist/bench/ceiling-app.js recommend-responder
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Body, Controller, Get, Inject, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';

export const CEILING_SUBJECT = 'bench.v1.ceiling.get';
export const CEILING_RECOMMEND_SUBJECT = 'bench.v1.ceiling.recommend';
const NATS = 'NATS';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

@Controller()
class CeilingController {
  constructor(@Inject(NATS) private readonly nats: NatsConnection) {}

  @Get('ceiling')
  async get(): Promise<unknown> {
    const reply = await this.nats.request(CEILING_SUBJECT, encoder.encode('{"agent_id":"agent_bench","traffic":"live","time_range":"7d"}'), { timeout: 2000 });
    return (JSON.parse(decoder.decode(reply.data)) as { result: unknown }).result;
  }

  @Post('ceiling/recommend')
  async recommend(@Body() body: { session_id: string; message_id: string; query: string }): Promise<unknown> {
    const request = { agent_id: 'agent_bench', traffic: 'live', session_id: body.session_id, message_id: body.message_id, query: body.query };
    const reply = await this.nats.request(CEILING_RECOMMEND_SUBJECT, encoder.encode(JSON.stringify(request)), { timeout: 2000 });
    return (JSON.parse(decoder.decode(reply.data)) as { result: unknown }).result;
  }
}

async function server(natsUrl: string, port: number): Promise<void> {
  const nats = await connect({ servers: natsUrl, name: 'bench-ceiling-server', noAsyncTraces: true });
  @Module({ controllers: [CeilingController], providers: [{ provide: NATS, useValue: nats }] })
  class CeilingModule {}
  const app = await NestFactory.create<NestFastifyApplication>(CeilingModule, new FastifyAdapter(), { logger: ['error'] });
  app.enableShutdownHooks(['SIGTERM']);
  process.once('SIGTERM', () => void nats.drain());
  await app.listen(port, '127.0.0.1');
}

async function responder(natsUrl: string): Promise<void> {
  const nats = await connect({ servers: natsUrl, name: 'bench-ceiling-responder', noAsyncTraces: true });
  const answer = encoder.encode(JSON.stringify({ ok: true, result: { status: 'ready', exposures: 1 } }));
  nats.subscribe(CEILING_SUBJECT, { queue: 'bench-ceiling', callback: (_error, msg) => void msg.respond(answer) });
  process.once('SIGTERM', () => void nats.drain().then(() => process.exit(0)));
}

/** Records three recommendations and one outbox row per request, in one transaction (the service's pool size). */
async function recommendResponder(natsUrl: string, databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, application_name: 'bench-ceiling-responder' });
  const nats = await connect({ servers: natsUrl, name: 'bench-ceiling-responder', noAsyncTraces: true });
  const record = async (request: { agent_id: string; traffic: string; session_id: string; message_id: string; query: string }) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const key = [request.agent_id, request.traffic, request.session_id, request.message_id];
      await client.query(
        `INSERT INTO recommendations.recommendation_request (agent_id, traffic, session_id, message_id, request_id, created_at) VALUES ($1, $2, $3, $4, $5, now())`,
        [...key, `req_${randomBytes(8).toString('hex')}`],
      );
      const ids = [0, 1, 2].map(() => `rec_${randomBytes(12).toString('hex')}`);
      await client.query(
        `INSERT INTO recommendations.recommendation (recommendation_id, agent_id, traffic, session_id, message_id, rank, ad_id, product_id, product_title, creative_input, landing_url, score, created_at)
         SELECT id, $1, $2, $3, $4, rank, 'ad_ceiling', 'prod_ceiling', 'Ceiling', '{}'::jsonb, 'https://shop.example.com/ceiling', 50, now()
           FROM unnest($5::text[]) WITH ORDINALITY AS r(id, rank)`,
        [...key, ids],
      );
      await client.query(`INSERT INTO recommendations.outbox (event_id, subject, payload) VALUES ($1, 'events.recommendation.generated', $2)`, [
        `evt_gen_${ids[0]}`,
        JSON.stringify({ recommendation_id: ids[0] }),
      ]);
      await client.query('COMMIT');
      return ids.map((id) => ({ recommendation_id: id, ad_id: 'ad_ceiling' }));
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  nats.subscribe(CEILING_RECOMMEND_SUBJECT, {
    queue: 'bench-ceiling',
    callback: (_error, msg) => {
      const request = JSON.parse(decoder.decode(msg.data)) as Parameters<typeof record>[0];
      void record(request).then(
        (recommendations) => msg.respond(encoder.encode(JSON.stringify({ ok: true, result: { query: request.query, recommendations } }))),
        (error: Error) => msg.respond(encoder.encode(JSON.stringify({ ok: false, error: { code: 'internal', message: error.message } }))),
      );
    },
  });
  process.once('SIGTERM', () => void nats.drain().then(() => pool.end()).then(() => process.exit(0)));
}

const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
if (process.argv[2] === 'server') await server(natsUrl, Number(process.env.PORT ?? 3999));
else if (process.argv[2] === 'responder') await responder(natsUrl);
else if (process.argv[2] === 'recommend-responder') await recommendResponder(natsUrl, process.env.DATABASE_URL ?? '');
else {
  process.stderr.write('usage: node dist/bench/ceiling-app.js server|responder|recommend-responder\n');
  process.exit(2);
}
