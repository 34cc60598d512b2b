import 'reflect-metadata';
import { Controller, Get, Injectable, Module, Param, type OnModuleDestroy } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect } from 'node:net';
import { createHttpApp, type ProblemFactory } from '#libs/bootstrap';
import { problemForStatus } from '../../apps/gateway/src/http/problem.js';
import { testLogger } from '../support/index.js';

/**
 * The answers Fastify and Node give before any Nest code runs, over real sockets: a malformed
 * URL (router), a malformed HTTP message (parser, clientError) and requests arriving while the
 * service shuts down. All of them are RFC 9457 problems built by createHttpApp (libs/bootstrap),
 * with the gateway's problem types when the gateway's factory is passed, `about:blank` otherwise.
 */

const PROBLEM = 'application/problem+json';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after answering. */
  closedByServer: boolean;
}

/** Writes `request` as-is to a new TCP connection and reads one response until the server closes. */
function rawRequest(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms: ${Buffer.concat(chunks).toString('latin1')}`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`not an HTTP response: ${JSON.stringify(text)}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['content-length'] !== undefined) body = Buffer.from(body).subarray(0, Number(headers['content-length'])).toString('utf8');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closedByServer: true });
    });
    socket.write(request);
  });
}

/** A well-formed request that asks the server to close afterwards (so rawRequest sees the end). */
function get(path: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n`;
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

function expectProblem(response: RawResponse, status: number): Problem {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-request-id']).toBeTruthy();
  expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
  const body = JSON.parse(response.body) as Problem;
  expect(Object.keys(body).sort()).toEqual(['detail', 'status', 'title', 'type']);
  expect(body.status).toBe(status);
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.detail.length).toBeGreaterThan(0);
  expect(response.body).not.toMatch(/FST_ERR|HPE_|\bat .+\.(js|ts):\d+/);
  return body;
}

// --- a minimal service: what createHttpApp adds does not depend on the gateway's code ---

let slowStarted: () => void = () => undefined;
let finishSlow: () => void = () => undefined;
/** Set by the shutdown test: the destroy hook then waits until the test releases it. */
let holdShutdown: { started: () => void; release?: () => void } | undefined;

@Controller()
class ProbeController {
  @Get('hello')
  hello() {
    return { hello: 'world' };
  }

  @Get('items/:id')
  item(@Param('id') id: string) {
    return { id };
  }

  @Get('slow')
  async slow() {
    await new Promise<void>((resolve) => {
      finishSlow = resolve;
      slowStarted();
    });
    return { done: true };
  }
}

/** Holds the shutdown inside the providers' destroy hooks (where NATS drains and pools close). */
@Injectable()
class SlowShutdown implements OnModuleDestroy {
  async onModuleDestroy() {
    const hold = holdShutdown;
    if (!hold) return;
    await new Promise<void>((resolve) => {
      hold.release = resolve;
      hold.started();
    });
  }
}

@Module({ controllers: [ProbeController], providers: [SlowShutdown] })
class ProbeModule {}

async function start(problem?: ProblemFactory): Promise<{ app: NestFastifyApplication; port: number }> {
  const app = await createHttpApp(ProbeModule, { service: 'http-errors-test', logger: testLogger('http-errors'), problem });
  await app.listen(0, '127.0.0.1');
  return { app, port: (app.getHttpServer().address() as { port: number }).port };
}

async function stop(app: NestFastifyApplication): Promise<void> {
  await app.close();
}

describe('with the gateway problem types', () => {
  let app: NestFastifyApplication;
  let port: number;

  beforeAll(async () => {
    ({ app, port } = await start(problemForStatus));
  });
  afterAll(async () => {
    await stop(app);
  });

  it('serves a well-formed request normally', async () => {
    const response = await rawRequest(port, get('/hello'));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ hello: 'world' });
  });

  it.each([
    ['a malformed percent-encoding in a parametric path', '/items/%zz'],
    ['a truncated percent-encoding', '/items/abc%2'],
    ['a malformed percent-encoding in a static path', '/hel%zzlo'],
  ])('answers %s with a 400 problem', async (_case, path) => {
    const response = await rawRequest(port, get(path));
    const body = expectProblem(response, 400);
    expect(body.type).toBe('https://docs.weave.example/problems/bad-request');
    expect(body.title).toBe('Bad request');
    expect(body.detail).toMatch(/percent-encoding/);
    expect(response.headers['x-request-id']).toMatch(UUID);
  });

  it('echoes a plain caller request id on a malformed URL and replaces an unsafe one', async () => {
    const echoed = await rawRequest(port, get('/items/%zz', { 'X-Request-Id': 'caller-42.a:b' }));
    expect(echoed.headers['x-request-id']).toBe('caller-42.a:b');
    const replaced = await rawRequest(port, get('/items/%zz', { 'X-Request-Id': 'x'.repeat(200) }));
    expect(replaced.headers['x-request-id']).toMatch(UUID);
  });

  it.each([
    ['a request line that is not HTTP', 'THIS IS NOT HTTP\r\n\r\n'],
    ['a header line without a colon', 'GET /hello HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n'],
    ['an invalid character in a header name', 'GET /hello HTTP/1.1\r\nHost: localhost\r\nBad(Name): x\r\n\r\n'],
    ['both Content-Length and Transfer-Encoding', 'POST /hello HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a Content-Length that is not a number', 'GET /hello HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n'],
  ])('answers %s with a raw 400 problem and closes the connection', async (_case, request) => {
    const response = await rawRequest(port, request);
    const body = expectProblem(response, 400);
    expect(body.type).toBe('https://docs.weave.example/problems/bad-request');
    expect(body.detail).toBe('The request is not a valid HTTP/1.1 message.');
    expect(response.headers.connection).toBe('close');
    expect(response.closedByServer).toBe(true);
  });

  it('answers headers over the size limit with a 431 problem', async () => {
    const response = await rawRequest(port, get('/hello', { 'X-Padding': 'a'.repeat(64 * 1024) }));
    const body = expectProblem(response, 431);
    expect(body.type).toBe('https://docs.weave.example/problems/request-header-fields-too-large');
    expect(response.headers.connection).toBe('close');
  });

  it('keeps serving after the malformed requests', async () => {
    const response = await rawRequest(port, get('/items/42'));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ id: '42' });
  });
});

describe('without a problem factory (the other services)', () => {
  let app: NestFastifyApplication;
  let port: number;

  beforeAll(async () => {
    ({ app, port } = await start());
  });
  afterAll(async () => {
    await stop(app);
  });

  it('answers a malformed URL with the generic about:blank problem', async () => {
    const body = expectProblem(await rawRequest(port, get('/items/%zz')), 400);
    expect(body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
  });

  it('answers a malformed HTTP message with the generic about:blank problem', async () => {
    const body = expectProblem(await rawRequest(port, 'NOT HTTP AT ALL\r\n\r\n'), 400);
    expect(body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
  });
});

describe('while shutting down', () => {
  it('refuses new requests with a 503 problem while in-flight requests complete', async () => {
    const { app, port } = await start(problemForStatus);
    const started = new Promise<void>((resolve) => (slowStarted = resolve));
    const inFlight = rawRequest(port, get('/slow'), 10000);
    await started;

    const hold: NonNullable<typeof holdShutdown> = { started: () => undefined };
    const destroying = new Promise<void>((resolve) => (hold.started = resolve));
    holdShutdown = hold;
    const closing = app.close();
    await destroying; // Nest has begun shutting down; the providers are closing their connections.

    const refused = await rawRequest(port, get('/hello', { 'X-Request-Id': 'during-shutdown' }));
    const body = expectProblem(refused, 503);
    expect(body.type).toBe('https://docs.weave.example/problems/service-unavailable');
    expect(body.detail).toMatch(/shutting down/);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers.connection).toBe('close');
    expect(refused.headers['x-request-id']).toBe('during-shutdown');

    finishSlow();
    const completed = await inFlight;
    expect(completed.status).toBe(200);
    expect(JSON.parse(completed.body)).toEqual({ done: true });

    hold.release?.();
    holdShutdown = undefined;
    await closing;
  });
});
