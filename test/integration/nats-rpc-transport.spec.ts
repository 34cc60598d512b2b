import 'reflect-metadata';
import { Controller, Inject, Module, type INestApplicationContext, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxy, ClientsModule, Ctx, MessagePattern, NatsContext, Payload, RpcException } from '@nestjs/microservices';
import { IsInt, IsString, Max, MinLength } from 'class-validator';
import { firstValueFrom } from 'rxjs';
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { FastCheck, REQUEST_ID_HEADER } from '#libs/contracts';
import { NatsRpcClient, NatsRpcServer, RawJson, RpcCallError, RpcErrorFilter, RpcValidationPipe, withRequestId } from '#libs/nats';
import { startNats, testLogger, type TestNats } from '../support/index.js';

/**
 * The Nest NATS transport of libs/nats (NatsRpcServer + NatsRpcClient) against a real
 * nats-server: @MessagePattern handlers with validated @Payload() DTOs, typed RpcExceptions,
 * the wire format of docs/asyncapi.yaml on both sides, the request id header, raw results,
 * queue groups, timeouts and "no responders".
 */
const SUBJECT = 'test.v1.echo';
const SLOW = 'test.v1.slow';
const RAW = 'test.v1.raw';
const BROKEN = 'test.v1.broken';
const CLIENT = Symbol('CLIENT');
const RAW_CLIENT = Symbol('RAW_CLIENT');
const decoder = new TextDecoder();
const encoder = new TextEncoder();

let fastChecks = 0;

@FastCheck((value) => {
  fastChecks++;
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'fast' && Object.keys(value).length === 2 && (value as { n?: unknown }).n === 1;
})
class EchoRequestDto {
  @IsString() @MinLength(1)
  name: string;

  @IsInt() @Max(100)
  n: number;
}

class SlowRequestDto {
  @IsInt() @Max(5000)
  ms: number;
}

@Controller()
class EchoController {
  constructor(@Inject('REPLICA') private readonly replica: string) {}

  @MessagePattern(SUBJECT)
  echo(@Payload() request: EchoRequestDto, @Ctx() context: NatsContext) {
    if (request.name === 'missing') throw new RpcException({ code: 'not_found', message: 'no such thing' });
    return { name: request.name, n: request.n, replica: this.replica, requestId: context.getHeaders()?.get(REQUEST_ID_HEADER) ?? null };
  }

  @MessagePattern(SLOW)
  async slow(@Payload() request: SlowRequestDto) {
    await new Promise((r) => setTimeout(r, request.ms));
    return { done: true };
  }

  @MessagePattern(RAW)
  raw() {
    return RawJson.of('{"already":"serialized"}');
  }

  @MessagePattern(BROKEN)
  broken() {
    throw new Error('database exploded');
  }
}

async function startService(url: string, replica: string): Promise<{ app: INestMicroservice; connection: NatsConnection }> {
  const connection = await connect({ servers: url });
  @Module({ controllers: [EchoController], providers: [{ provide: 'REPLICA', useValue: replica }] })
  class EchoModule {}
  const logger = testLogger(`echo-${replica}`);
  const app = await NestFactory.createMicroservice(EchoModule, { strategy: new NatsRpcServer(connection, { queue: 'echo', logger }), logger: false });
  app.useGlobalPipes(new RpcValidationPipe());
  app.useGlobalFilters(new RpcErrorFilter(logger));
  await app.listen();
  return { app, connection };
}

let nats: TestNats;
let services: { app: INestMicroservice; connection: NatsConnection }[];
let callerConnection: NatsConnection;
let callerApp: INestApplicationContext;
let client: ClientProxy;
let rawClient: ClientProxy;

const ask = <T>(subject: string, payload: unknown, requestId?: string) => firstValueFrom(client.send<T>(subject, withRequestId(payload, requestId)));

/** A plain NATS request, as another team's client would send it: the wire format itself. */
async function wire(subject: string, body: string, requestId?: string): Promise<unknown> {
  const h = natsHeaders();
  if (requestId) h.set(REQUEST_ID_HEADER, requestId);
  const msg = await callerConnection.request(subject, encoder.encode(body), { timeout: 2000, headers: h });
  return JSON.parse(decoder.decode(msg.data));
}

beforeAll(async () => {
  nats = await startNats();
  services = [await startService(nats.url, 'a'), await startService(nats.url, 'b')];
  callerConnection = await connect({ servers: nats.url });
  @Module({
    imports: [
      ClientsModule.register([
        { name: CLIENT, customClass: NatsRpcClient, options: { connection: callerConnection, timeoutMs: 300 } },
        { name: RAW_CLIENT, customClass: NatsRpcClient, options: { connection: callerConnection, timeoutMs: 300, rawResults: true } },
      ]),
    ],
  })
  class CallerModule {}
  callerApp = await NestFactory.createApplicationContext(CallerModule, { logger: false });
  client = callerApp.get(CLIENT);
  rawClient = callerApp.get(RAW_CLIENT);
});

afterAll(async () => {
  await callerApp?.close();
  await callerConnection?.close();
  for (const service of services ?? []) {
    await service.app.close();
    await service.connection.close();
  }
  await nats?.stop();
});

describe('NatsRpcClient → NatsRpcServer', () => {
  it('answers a valid request through the @MessagePattern handler, with the request id from the header', async () => {
    const result = await ask<Record<string, unknown>>(SUBJECT, { name: 'x', n: 3 }, 'req-42');
    expect(result).toMatchObject({ name: 'x', n: 3, requestId: 'req-42' });
    expect(['a', 'b']).toContain(result.replica);
  });

  it('shares requests between the replicas of the queue group', async () => {
    const replicas = new Set<unknown>();
    for (let i = 0; i < 40; i++) replicas.add((await ask<Record<string, unknown>>(SUBJECT, { name: 'x', n: i })).replica);
    expect(replicas).toEqual(new Set(['a', 'b']));
  });

  it('turns a typed RpcException into an RpcCallError with its code', async () => {
    const error = await ask(SUBJECT, { name: 'missing', n: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcCallError);
    expect(error).toMatchObject({ subject: SUBJECT, code: 'not_found', message: 'no such thing', answered: true });
  });

  it('validates the payload against its DTO: wrong types, unknown fields and non-objects are invalid_request', async () => {
    for (const payload of [{ name: '', n: 1 }, { name: 'x', n: 1000 }, { name: 'x', n: 1, extra: true }, 'text', [1, 2]]) {
      const error = await ask(SUBJECT, payload).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid_request', answered: true });
    }
    const error = (await ask(SUBJECT, { name: 'x', n: 1, extra: true }).catch((e: unknown) => e)) as RpcCallError;
    expect(error.message).toContain('property extra should not exist');
  });

  it('skips class-validator when the DTO fast check accepts, and still validates when it does not', async () => {
    const before = fastChecks;
    expect(await ask(SUBJECT, { name: 'fast', n: 1 })).toMatchObject({ name: 'fast', n: 1 });
    expect(fastChecks).toBe(before + 1);
    await expect(ask(SUBJECT, { name: 'fast', n: 1000 })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('answers internal for an unexpected failure, without its message', async () => {
    const error = await ask(BROKEN, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal', message: 'internal error', answered: true });
  });

  it('gives up after the client timeout with an unanswered unavailable error', async () => {
    const started = Date.now();
    const error = await ask(SLOW, { ms: 600 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', answered: false });
    expect(Date.now() - started).toBeLessThan(590);
  });

  it('waits the timeout a request carries instead of the client timeout, shorter or longer', async () => {
    const started = Date.now();
    const early = await firstValueFrom(client.send(SLOW, withRequestId({ ms: 600 }, 'req-short', { timeoutMs: 100 }))).catch((e: unknown) => e);
    expect(early).toMatchObject({ code: 'unavailable', answered: false });
    expect(Date.now() - started).toBeLessThan(290);
    // The client gives up after 300 ms; this request may wait a second for its 500 ms answer.
    await expect(firstValueFrom(client.send(SLOW, withRequestId({ ms: 500 }, 'req-long', { timeoutMs: 1000 })))).resolves.toEqual({ done: true });
  });

  it('fails at once when nobody listens on the subject (no responders)', async () => {
    const error = await ask('test.v1.nobody', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ subject: 'test.v1.nobody', code: 'unavailable', answered: false });
  });

  it('sends the requests of one turn of the event loop together, each answered with its own reply', async () => {
    const original = callerConnection.request.bind(callerConnection);
    let sent = 0;
    callerConnection.request = ((...args: Parameters<NatsConnection['request']>) => {
      sent++;
      return original(...args);
    }) as NatsConnection['request'];
    try {
      const replies = Array.from({ length: 20 }, (_, i) => ask<{ name: string; n: number }>(SUBJECT, { name: `batch-${i}`, n: i }, `req-batch-${i}`));
      // Queued, not sent yet: they go out together at the end of this turn.
      expect(sent).toBe(0);
      const answered = await Promise.all(replies);
      expect(sent).toBe(20);
      expect(answered.map((r) => [r.name, r.n])).toEqual(Array.from({ length: 20 }, (_, i) => [`batch-${i}`, i]));
    } finally {
      callerConnection.request = original;
    }
    // A request of a later turn is sent in its own batch.
    expect(await ask(SUBJECT, { name: 'after', n: 1 })).toMatchObject({ name: 'after', n: 1 });
  });

  it('forwards results as raw JSON bytes when configured, and parses raw handler results otherwise', async () => {
    const raw = await firstValueFrom(rawClient.send<RawJson>(SUBJECT, { name: 'r', n: 2 }));
    expect(raw).toBeInstanceOf(RawJson);
    expect(JSON.parse(Buffer.from(raw.bytes).toString('utf8'))).toMatchObject({ name: 'r', n: 2 });
    expect(await ask(RAW, {})).toEqual({ already: 'serialized' });
  });
});

describe('the wire format (docs/asyncapi.yaml)', () => {
  it('a request is the plain DTO; a reply is {ok:true,result} or {ok:false,error}', async () => {
    expect(await wire(SUBJECT, '{"name":"w","n":5}', 'req-7')).toEqual({ ok: true, result: expect.objectContaining({ name: 'w', n: 5, requestId: 'req-7' }) });
    expect(await wire(SUBJECT, '{"name":"missing","n":5}')).toEqual({ ok: false, error: { code: 'not_found', message: 'no such thing' } });
    expect(await wire(RAW, '{}')).toEqual({ ok: true, result: { already: 'serialized' } });
  });

  it('a body that is not JSON is invalid_request', async () => {
    expect(await wire(SUBJECT, 'not json')).toEqual({ ok: false, error: { code: 'invalid_request', message: 'request is not JSON' } });
  });
});

describe('shutdown', () => {
  it('close() stops taking requests and waits for those in flight to be answered', async () => {
    for (const service of services.splice(0)) {
      await service.app.close();
      await service.connection.close();
    }
    const extra = await startService(nats.url, 'c');
    const inFlight = firstValueFrom(client.send(SLOW, { ms: 200 })).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await extra.app.close();
    await expect(inFlight).resolves.toEqual({ done: true });
    await extra.connection.close();
  });
});
