/**
 * The ceiling of the read path's architecture, for bench/read.bench.ts: a bare NestJS-on-Fastify
 * app with one route that does one NATS request/reply, and a trivial responder. No auth, no
 * validation, no hooks, no metrics, no logging. Run as two child processes, like the gateway and
 * reporting-projection:
 *
 *   NATS_URL=… PORT=… node dist/bench/ceiling-app.js server
 *   NATS_URL=… node dist/bench/ceiling-app.js responder
 */
import 'reflect-metadata';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type NatsConnection } from '@nats-io/transport-node';

export const CEILING_SUBJECT = 'bench.v1.ceiling.get';
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

const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
if (process.argv[2] === 'server') await server(natsUrl, Number(process.env.PORT ?? 3999));
else if (process.argv[2] === 'responder') await responder(natsUrl);
else {
  process.stderr.write('usage: node dist/bench/ceiling-app.js server|responder\n');
  process.exit(2);
}
