import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '#libs/observability';

/**
 * RFC 9457 problem details for the responses Fastify and Node produce before any Nest code
 * runs: a malformed URL (the router), a malformed HTTP message (Node's parser, `clientError`)
 * and requests arriving while the service shuts down. A service's exception filter answers
 * everything else; this keeps the framework's own answers in the same shape.
 */
export interface HttpProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/** Builds the problem for a status: a service passes its own to keep its problem type URIs. */
export type ProblemFactory = (status: number, detail: string) => HttpProblem;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Seconds a caller waits before retrying a request refused during shutdown. */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 5;

/** The generic problem (RFC 9457 §4.2.1): `about:blank` with the status phrase as title. */
export const blankProblem: ProblemFactory = (status, detail) => ({
  type: 'about:blank',
  title: STATUS_CODES[status] ?? 'Error',
  status,
  detail,
});

// A caller's request id is echoed and logged: accept only a short, plain token, else make one.
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify `genReqId`: the caller's X-Request-Id when it is a plain token, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
}

function serialize(problem: HttpProblem): Buffer {
  return Buffer.from(JSON.stringify(problem), 'utf8');
}

/** Sends a problem through a Fastify reply (a Buffer keeps Fastify from appending a charset). */
export function sendProblem(reply: FastifyReply, problem: HttpProblem, headers: Record<string, string>): void {
  void reply
    .code(problem.status)
    .headers({ ...headers, 'Cache-Control': 'no-store' })
    .header('Content-Type', PROBLEM_CONTENT_TYPE)
    .send(serialize(problem));
}

const FRAMEWORK_DETAILS: Record<string, string> = {
  FST_ERR_BAD_URL: 'The request path is not a valid URL: it contains a malformed percent-encoding.',
  FST_ERR_MAX_PARAM_LENGTH: 'A path segment of the request is too long.',
  FST_ERR_ASYNC_CONSTRAINT: 'An unexpected error occurred while routing the request.',
};

/**
 * Fastify's `frameworkErrors` option: the router's errors (malformed URL 400, over-long path
 * parameter 414, failing route constraint 500) answered as problems. No route matched, so no
 * hook ran: the request id is set here.
 */
export function frameworkErrorHandler(problem: ProblemFactory, logger: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 400;
    if (status >= 500) logger.error({ err: error.message, code: error.code, requestId: request.id }, 'routing failed');
    const detail = FRAMEWORK_DETAILS[error.code] ?? (STATUS_CODES[status] ?? 'Error');
    sendProblem(reply, problem(status, detail), { 'X-Request-Id': String(request.id) });
  };
}

/** What Node's HTTP parser reports (`clientError`), as status and detail. */
function clientErrorProblem(code: string | undefined): [number, string] {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'The request was not received completely in time.'];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'The request headers are too large.'];
    default:
      return [400, 'The request is not a valid HTTP/1.1 message.'];
  }
}

/**
 * Writes a problem to a socket as a raw HTTP/1.1 response and closes the connection: for the
 * messages that never become a Fastify request (unparsable ones, CONNECT).
 */
function writeRawProblem(socket: Duplex, problem: HttpProblem, extraHeaders = ''): void {
  // While a response is being written, a second status line would corrupt the stream.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = serialize(problem);
    const head =
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
      `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
      `Content-Length: ${body.length}\r\n` +
      'Cache-Control: no-store\r\n' +
      `X-Request-Id: ${randomUUID()}\r\n` +
      extraHeaders +
      'Connection: close\r\n\r\n';
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  }
  socket.destroy();
}

/**
 * Fastify's `clientErrorHandler` (Node's `clientError`): a message Node cannot parse has no
 * request nor reply, so the problem is written to the socket as a raw HTTP/1.1 response and
 * the connection is closed (the rest of the stream cannot be trusted to frame a request).
 */
export function clientErrorHandler(problem: ProblemFactory, logger: Logger) {
  return (error: NodeJS.ErrnoException, socket: Duplex): void => {
    // A reset connection is gone: nothing can be answered.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, detail] = clientErrorProblem(error.code);
    logger.debug({ code: error.code, status }, 'malformed HTTP request');
    writeRawProblem(socket, problem(status, detail));
  };
}

/**
 * What Node answers on its own, before Fastify sees a request, answered as problems instead:
 * - CONNECT (Node hands the socket to a `connect` listener, and without one just closes it):
 *   405, no service here is a proxy;
 * - an `Expect` header other than 100-continue (Node's own answer is a 417 without a body).
 */
export function installNodeLevelProblems(server: Server, problem: ProblemFactory): void {
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    writeRawProblem(socket, problem(405, 'CONNECT is not supported: this service is not a proxy.'), 'Allow: GET, HEAD, POST, PUT, PATCH, DELETE\r\n');
  });
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const body = serialize(problem(417, 'Only "Expect: 100-continue" is supported.'));
    response.writeHead(417, {
      'Content-Type': PROBLEM_CONTENT_TYPE,
      'Content-Length': body.length,
      'Cache-Control': 'no-store',
      'X-Request-Id': randomUUID(),
      Connection: 'close',
    });
    response.end(body);
  });
}

/** Headers a request may carry at most once: a second copy makes the request ambiguous. */
const SINGLE_HEADERS = new Map(
  ['host', 'authorization', 'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'x-request-id'].map((name, i) => [name, 1 << i]),
);

/**
 * Refuses, before any routing or authentication, requests whose framing or credentials are
 * ambiguous or cannot be honoured (each a 4xx problem):
 * - HTTP/1.1 without Host (RFC 9112 §3.2; Node's own 400 has no body, so its check is off);
 * - a repeated Host, Authorization, Content-Type, Content-Length, Content-Encoding,
 *   Transfer-Encoding or X-Request-Id (Node keeps the first Authorization and silently drops
 *   the rest: which credential was meant cannot be told);
 * - a body in a Content-Encoding other than identity (415: no service decodes compressed
 *   bodies, and reading gzip bytes as JSON would be wrong).
 * One pass over the raw header names, one bit per header seen.
 */
export function installRequestChecks(fastify: FastifyInstance, problem: ProblemFactory): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    const names = raw.rawHeaders;
    let seen = 0;
    let failure: [number, string] | undefined;
    for (let i = 0; i < names.length && !failure; i += 2) {
      const bit = SINGLE_HEADERS.get(names[i].toLowerCase());
      if (bit === undefined) continue;
      if (seen & bit) failure = [400, `The ${names[i]} header appears more than once.`];
      seen |= bit;
    }
    if (!failure && raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && raw.headers.host === undefined) {
      failure = [400, 'The Host header is required in HTTP/1.1.'];
    }
    const encoding = raw.headers['content-encoding'];
    if (!failure && encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      failure = [415, 'Compressed request bodies are not accepted: send the body without a Content-Encoding.'];
    }
    if (!failure) {
      done();
      return;
    }
    const headers: Record<string, string> = { 'X-Request-Id': String(request.id) };
    if (raw.httpVersionMajor === 1) headers.Connection = 'close';
    sendProblem(reply, problem(failure[0], failure[1]), headers);
  });
}

/**
 * Refuses new requests once shutdown has begun, with a 503 problem, `Retry-After` and
 * `Connection: close`, so the caller (or the load balancer) goes to another instance. It
 * replaces Fastify's `return503OnClosing`, whose body is a fixed non-problem JSON, and starts
 * earlier: when Nest begins shutting down (before the providers close their connections), not
 * only when the HTTP server itself closes. Requests already in flight are not affected.
 */
export function installShutdownRefusal(fastify: FastifyInstance, isShuttingDown: () => boolean, problem: ProblemFactory): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!isShuttingDown()) {
      done();
      return;
    }
    const headers: Record<string, string> = {
      'Retry-After': String(SHUTDOWN_RETRY_AFTER_SECONDS),
      'X-Request-Id': String(request.id),
    };
    if (request.raw.httpVersionMajor !== 2) headers.Connection = 'close';
    sendProblem(reply, problem(503, 'The service is shutting down; retry the request.'), headers);
  });
}
