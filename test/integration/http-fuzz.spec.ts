import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { checkProperty, fuzzSeed, seedPlatform, startFuzzedPlatform, startIdentityProvider, useTestStack, type ServiceUnderTest } from '../support/index.js';
import { signIdToken, unsignedIdToken } from '../support/oidc.js';

/**
 * Property-based fuzzing of every HTTP route over real sockets. The gateway's routes come from
 * its own OpenAPI document (GET /docs/openapi.json), so a route added later is fuzzed too; random
 * paths, methods, query strings (repeated, unicode, huge, broken percent-encodings), headers
 * (credential shapes, duplicates, content types and encodings, obs-text bytes), bodies (random
 * and schema-shaped JSON, truncated JSON, binary, invalid UTF-8, oversized) and framings are
 * thrown at it with every service behind it running. Whatever comes in:
 * - never a 5xx;
 * - never a stack trace, file path or internal error code in the body;
 * - every 4xx is an RFC 9457 problem (application/problem+json) whose `status` is the HTTP status;
 * - a body over the limit on a route that takes one answers 413.
 * The other services' HTTP (health and metrics, same createHttpApp) gets the same treatment.
 * A table of hostile requests with a known answer (duplicate credentials or Host, no Host,
 * CONNECT, odd Expect, compressed or non-UTF-8 bodies, prototype keys, broken percent-encoding,
 * oversized headers) pins the exact status and reason on the gateway and the other services.
 *
 * The seed changes with every run and is printed at start; FUZZ_SEED=<n> replays a run
 * (fast-check prints the seed and the shrunk request on failure too).
 */
const SEED = fuzzSeed('http-fuzz');
const BODY_LIMIT = 64 * 1024;
const PROBLEM = 'application/problem+json';

const stack = useTestStack();
let gatewayPort: number;
let services: ServiceUnderTest<unknown>[] = [];
let document: OpenApiDocument;
const credentials: Record<string, string> = {};

interface OpenApiParameter {
  name: string;
  in: string;
  schema?: { type?: string; enum?: string[] };
}
interface OpenApiSchema {
  type?: string;
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
  $ref?: string;
}
interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: OpenApiSchema }> };
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, OpenApiSchema> };
}
interface Operation {
  path: string;
  method: string;
  query: OpenApiParameter[];
  pathParams: string[];
  body?: OpenApiSchema;
  /** The security scheme of the route (platform_api_key, id_token), if any. */
  security?: string;
}

beforeAll(async () => {
  const { jwks, key: signing } = await startIdentityProvider(stack, ['ES256']);
  // The limiter stays on, with limits this run cannot reach (startFuzzedPlatform).
  const platform = await startFuzzedPlatform(stack, jwks.url);
  services = platform.services;
  gatewayPort = Number(new URL(platform.gateway).port);

  const { identity, keys } = await seedPlatform(stack, 'agent_fuzz', { owner: 'uid_fuzz', keys: ['live', 'test'] });
  const suspended = await seedPlatform(stack, 'agent_fuzz_suspended', { owner: 'uid_fuzz_suspended' });
  credentials.liveKey = keys.live;
  credentials.testKey = keys.test;
  credentials.suspendedKey = suspended.key;
  const revoked = await identity.createKey('agent_fuzz', 'live');
  await identity.revokeKey(revoked.key_id);
  credentials.revokedKey = revoked.api_key;
  await identity.setStatus('agent_fuzz_suspended', 'suspended');
  credentials.agentToken = await signIdToken(signing, { sub: 'uid_fuzz', role: 'agent' });
  credentials.ownerToken = await signIdToken(signing, { sub: 'uid_fuzz' });
  credentials.suspendedToken = await signIdToken(signing, { sub: 'uid_fuzz_suspended', role: 'agent' });
  credentials.expiredToken = await signIdToken(signing, { sub: 'uid_fuzz', role: 'agent', iat: 1_000_000, exp: 1_000_600 });
  credentials.otherAudience = await signIdToken(signing, { sub: 'uid_fuzz', aud: 'someone-else' });
  credentials.unsigned = unsignedIdToken({ sub: 'uid_fuzz', role: 'agent' });

  document = (await (await fetch(`http://127.0.0.1:${gatewayPort}/docs/openapi.json`)).json()) as OpenApiDocument;
});

function operations(): Operation[] {
  const list: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = operation.parameters ?? [];
      list.push({
        path,
        method: method.toUpperCase(),
        query: parameters.filter((p) => p.in === 'query'),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        body: operation.requestBody?.content['application/json']?.schema,
        security: Object.keys(operation.security?.[0] ?? {})[0],
      });
    }
  }
  return list;
}

function resolve(schema: OpenApiSchema | undefined): OpenApiSchema | undefined {
  if (!schema?.$ref) return schema;
  return document.components?.schemas?.[schema.$ref.split('/').pop() ?? ''];
}

// ─────────────────────────── raw HTTP ───────────────────────────

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  if (!encoding || body.length === 0) return body;
  if (encoding.includes('gzip')) return gunzipSync(body);
  if (encoding.includes('br')) return brotliDecompressSync(body);
  if (encoding.includes('deflate')) return inflateSync(body);
  return body;
}

function parseResponse(data: Buffer, method: string): RawResponse {
  let offset = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end < 0) throw new Error(`no complete response: ${JSON.stringify(data.subarray(0, 300).toString('latin1'))}`);
    const [statusLine, ...lines] = data.subarray(offset, end).toString('latin1').split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      headers[name] = headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`;
    }
    offset = end + 4;
    if (status >= 100 && status < 200) continue; // 100 Continue before the answer
    let body = data.subarray(offset);
    if (method === 'HEAD' || status === 204 || status === 304) body = Buffer.alloc(0);
    else if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) body = dechunk(body);
    else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
    return { status, headers, body: decode(body, headers['content-encoding']) };
  }
}

/** Writes the request as-is on a new connection and reads until the server closes it. */
function exchange(port: number, request: Buffer, method: string, timeoutMs = 15000): Promise<RawResponse> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms; received ${JSON.stringify(Buffer.concat(chunks).subarray(0, 300).toString('latin1'))}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may answer (413, 400) and close before reading the whole body: EPIPE/ECONNRESET then.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolvePromise(parseResponse(Buffer.concat(chunks), method));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(request);
  });
}

// ─────────────────────────── hostile requests ───────────────────────────

interface FuzzRequest {
  method: string;
  target: string;
  version: string;
  headers: [string, string | Buffer][];
  body?: Buffer;
  chunked: boolean;
  oversized: boolean;
}

function serialize(request: FuzzRequest): Buffer {
  const head: Buffer[] = [Buffer.from(`${request.method} ${request.target} ${request.version}\r\n`, 'latin1')];
  for (const [name, value] of request.headers) head.push(Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.from(value as string, 'latin1'), Buffer.from('\r\n')]));
  let body = request.body ?? Buffer.alloc(0);
  if (request.body !== undefined) {
    if (request.chunked) {
      head.push(Buffer.from('Transfer-Encoding: chunked\r\n'));
      body = body.length === 0 ? Buffer.from('0\r\n\r\n') : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    } else {
      head.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
    }
  }
  head.push(Buffer.from('Connection: close\r\n\r\n'));
  return Buffer.concat([...head, body]);
}

const describeRequest = (r: FuzzRequest) =>
  `${r.method} ${r.target.slice(0, 200)} ${r.version} [${r.headers.map(([n, v]) => `${n}: ${String(v).slice(0, 60)}`).join(' | ')}]` +
  (r.body ? ` body ${r.body.length} B${r.chunked ? ' chunked' : ''}: ${JSON.stringify(r.body.subarray(0, 120).toString('latin1'))}` : '');

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'CONNECT', 'SEARCH'];
const unicode = (maxLength: number) => fc.string({ unit: 'grapheme', maxLength });
const printable = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });
/** Header value bytes: visible ASCII, spaces, and obs-text (0x80–0xff), which HTTP/1.1 allows. */
const headerBytes = fc
  .uint8Array({ maxLength: 200 })
  .map((bytes) => Buffer.from(bytes.map((b) => (b < 0x20 || b === 0x7f ? 0x41 + (b % 26) : b))).toString('latin1'));

/** A value as it may appear in a URL: encoded properly, raw, or with broken percent-encodings. */
const urlValue = fc.oneof(
  unicode(40).map(encodeURIComponent),
  printable(30).map((s) => s.replace(/[\s#]/g, '')),
  fc.constantFrom('%', '%zz', '%F', '%FF%FE', '%C3%28', '%E2%82', '%00', '%2e%2e', '..', '+', '%2F', '%25'),
  fc.integer({ min: 1_000, max: 8_000 }).map((n) => 'v'.repeat(n)),
);

const queryName = () =>
  fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'a[b]', 'x[]', '', 'time_range', 'page', 'status', 't'),
    urlValue,
  );

const queryValue = (operation?: Operation) =>
  fc.oneof(
    ...(operation ? operation.query.filter((q) => q.schema?.enum).map((q) => fc.constantFrom(...(q.schema?.enum ?? []))) : []),
    fc.integer({ min: -5, max: 200 }).map(String),
    fc.constantFrom('1e3', '0x10', '1.5', '-0', 'NaN', 'Infinity', '9007199254740993'),
    urlValue,
  );

/** A plausible value for a declared query parameter: one of its enum values, else a small number. */
const declaredValue = (parameter: OpenApiParameter) =>
  parameter.schema?.enum ? fc.constantFrom(...parameter.schema.enum) : fc.integer({ min: 0, max: 120 }).map(String);

const queryString = (operation?: Operation) => {
  const declared = operation?.query ?? [];
  const plausible = declared.length === 0
    ? fc.constant(undefined)
    : fc.subarray(declared).chain((chosen) =>
        fc.tuple(...chosen.map((p) => declaredValue(p).map((v) => `${p.name}=${encodeURIComponent(v)}`))).map((pairs) => (pairs.length ? pairs.join('&') : undefined)),
      );
  const hostile = fc
    .array(fc.tuple(fc.oneof(queryName(), ...(declared.length ? [fc.constantFrom(...declared.map((q) => q.name))] : [])), fc.option(queryValue(operation), { nil: undefined })), { maxLength: 5 })
    .map((pairs) => pairs.map(([name, value]) => (value === undefined ? name : `${name}=${value}`)).join('&'));
  return fc.oneof({ arbitrary: plausible, weight: 3 }, { arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: hostile, weight: 2 });
};

const pathParam = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
  urlValue,
  fc.integer({ min: 590, max: 700 }).map((n) => 's'.repeat(n)),
);

const randomPath = fc.array(fc.oneof(fc.webSegment(), urlValue, fc.constantFrom('agent', 'agent-payouts', 'me', 'docs', 'track', 'health', 'metrics', '')), { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`);

/** The credentials a route accepts: the one the fuzzer mostly sends, so requests get past the door. */
function matchingCredentials(operation?: Operation): string[] {
  if (operation?.security === 'platform_api_key') return [credentials.liveKey, credentials.testKey];
  if (operation?.security === 'id_token') return [credentials.agentToken, credentials.ownerToken];
  return Object.values(credentials);
}

/** Authorization headers: mostly the route's valid credential, else every other kind and odd shapes. */
const authorization = (operation?: Operation): fc.Arbitrary<string | string[] | undefined> =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...matchingCredentials(operation)).map((c) => `Bearer ${c}`), weight: 24 },
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: fc.constantFrom(...Object.values(credentials)).map((c) => `Bearer ${c}`), weight: 4 },
    { arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'bearer  sk_live_', 'Basic dXNlcjpwYXNz', 'Token abc', 'Bearer a.b.c', 'Bearer sk_test_short', 'Bearer eyJhbGciOiJub25lIn0..'), weight: 1 },
    { arbitrary: fc.tuple(fc.constantFrom('Bearer ', 'bearer ', 'BEARER ', ''), printable(80)).map(([scheme, value]) => scheme + value), weight: 1 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9]{32,40}$/).map((s) => `Bearer sk_live_${s}`), weight: 1 },
    { arbitrary: fc.integer({ min: 2_000, max: 12_000 }).map((n) => `Bearer ${'k'.repeat(n)}`), weight: 1 },
    { arbitrary: fc.tuple(fc.constantFrom(...Object.values(credentials)), fc.constantFrom(...Object.values(credentials))).map(([a, b]) => [`Bearer ${a}`, `Bearer ${b}`]), weight: 1 },
  );

const contentType = fc.oneof(
  { arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8'), weight: 8 },
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json;charset="utf-8"',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'application/problem+json',
    'text/plain',
    'text/plain; charset=utf-16',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/xml',
    'application/octet-stream',
    ';;;',
    '',
  ),
  printable(40),
);

/** A JSON value shaped like the route's body schema: its fields, random or plausible values. */
function schemaShaped(schema: OpenApiSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const resolved = resolve(schema);
  if (!resolved || depth > 3) return fc.jsonValue({ maxDepth: 1 });
  if (resolved.type === 'object' || resolved.properties) {
    const fields = Object.entries(resolved.properties ?? {});
    return fc
      .tuple(
        ...fields.map(([, property]) => fc.option(schemaShaped(property, depth + 1), { nil: undefined, freq: 4 })),
        fc.option(fc.tuple(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })), { nil: undefined, freq: 3 }),
      )
      .map((values) => {
        const object: Record<string, unknown> = {};
        fields.forEach(([name], i) => {
          if (values[i] !== undefined) object[name] = values[i];
        });
        const extra = values[fields.length] as [string, unknown] | undefined;
        if (extra) object[extra[0]] = extra[1];
        return object;
      });
  }
  if (resolved.type === 'array') return fc.array(schemaShaped(resolved.items, depth + 1), { maxLength: 60 });
  const plausible =
    resolved.type === 'integer' || resolved.type === 'number'
      ? fc.oneof(fc.integer({ min: -10, max: 20_000 }), fc.double())
      : fc.oneof(unicode(60), fc.constantFrom('Europe/Paris', 'UTC', 'Mars/Base', '+05:00', 'user', 'running shoes'), fc.integer({ min: 2_000, max: 5_000 }).map((n) => 'q'.repeat(n)));
  return fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: fc.jsonValue({ maxDepth: 1 }), weight: 1 });
}

const body = (operation?: Operation): fc.Arbitrary<{ bytes: Buffer; oversized: boolean }> =>
  fc.oneof(
    { arbitrary: schemaShaped(operation?.body).map((v) => ({ bytes: Buffer.from(JSON.stringify(v) ?? 'null'), oversized: false })), weight: 6 },
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ bytes: Buffer.from(JSON.stringify(v)), oversized: false })),
    schemaShaped(operation?.body).chain((v) => {
      const text = JSON.stringify(v) ?? 'null';
      return fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((cut) => ({ bytes: Buffer.from(text.slice(0, cut)), oversized: false }));
    }),
    fc.uint8Array({ maxLength: 400 }).map((b) => ({ bytes: Buffer.from(b), oversized: false })),
    fc.constant({ bytes: Buffer.from([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d]), oversized: false }),
    fc.constantFrom('a=b&c=d', 'reporting_timezone=UTC', '__proto__[x]=1', '--xyz\r\n\r\n--xyz--').map((s) => ({ bytes: Buffer.from(s), oversized: false })),
    fc.integer({ min: 1, max: 16 * 1024 }).map((extra) => ({ bytes: Buffer.from(JSON.stringify({ query: 'o'.repeat(BODY_LIMIT + extra) })), oversized: true })),
  );

const someExtraHeaders = fc.array(
  fc.oneof(
    fc.tuple(fc.constant('Content-Encoding'), fc.constantFrom('gzip', 'br', 'identity', 'deflate, gzip', 'x-unknown')),
    fc.tuple(fc.constant('Accept-Encoding'), fc.constantFrom('gzip', 'br', 'deflate', '*', 'identity;q=0', 'gzip;q=0.5, br')),
    fc.tuple(fc.constant('Accept'), fc.constantFrom('application/json', 'text/html', '*/*', 'application/problem+json', 'image/png')),
    fc.tuple(fc.constant('X-Request-Id'), fc.oneof(printable(40), fc.constant('r'.repeat(300)))),
    fc.tuple(fc.constant('X-Forwarded-For'), fc.oneof(fc.ipV4(), fc.ipV6(), printable(30), fc.constant('203.0.113.9, 10.0.0.1'))),
    fc.tuple(fc.constant('Expect'), fc.constantFrom('100-continue', 'teapot')),
    fc.tuple(fc.constantFrom('Host', 'Content-Type', 'X-Request-Id'), printable(20)), // duplicates of single headers
    fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), headerBytes),
  ),
  { minLength: 1, maxLength: 4 },
);
const extraHeaders = fc.oneof({ arbitrary: fc.constant([] as [string, string][]), weight: 2 }, { arbitrary: someExtraHeaders, weight: 1 });

/** `arbitrary` or undefined, `odds` to one. */
const maybe = <T>(arbitrary: fc.Arbitrary<T>, odds: number): fc.Arbitrary<T | undefined> =>
  odds >= 1
    ? fc.oneof({ arbitrary, weight: Math.round(odds) }, { arbitrary: fc.constant(undefined), weight: 1 })
    : fc.oneof({ arbitrary, weight: 1 }, { arbitrary: fc.constant(undefined), weight: Math.round(1 / odds) });

function fuzzRequest(ops: Operation[]): fc.Arbitrary<FuzzRequest> {
  const routeTarget = fc.constantFrom(...ops).chain((operation) =>
    fc
      .tuple(
        fc.array(pathParam, { minLength: operation.pathParams.length, maxLength: operation.pathParams.length }),
        queryString(operation),
        fc.oneof({ arbitrary: fc.constant(operation.method), weight: 8 }, { arbitrary: fc.constantFrom(...METHODS), weight: 1 }),
      )
      .map(([params, query, method]) => {
        let path = operation.path;
        operation.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, params[i])));
        return { operation: operation as Operation | undefined, method, target: query === undefined ? path : `${path}?${query}` };
      }),
  );
  const otherTarget = fc.tuple(fc.oneof(randomPath, fc.constantFrom('*', 'http://evil.example/agent/reporting', '//agent/reporting')), queryString(), fc.constantFrom(...METHODS)).map(([path, query, method]) => ({
    operation: undefined as Operation | undefined,
    method,
    target: query === undefined ? path : `${path}?${query}`,
  }));
  return fc.oneof({ arbitrary: routeTarget, weight: 4 }, { arbitrary: otherTarget, weight: 1 }).chain(({ operation, method, target }) =>
    fc
      .record({
        version: fc.oneof({ arbitrary: fc.constant('HTTP/1.1'), weight: 9 }, { arbitrary: fc.constant('HTTP/1.0'), weight: 1 }),
        host: fc.oneof({ arbitrary: fc.constant<string | undefined>('localhost'), weight: 20 }, fc.constant(undefined), fc.constant('a'.repeat(300))),
        authorization: authorization(operation),
        contentType: maybe(contentType, operation?.body ? 8 : 1),
        body: maybe(body(operation), operation?.body && method === operation.method ? 7 : ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? 1 : 0.25),
        chunked: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
        extra: extraHeaders,
      })
      .map((r) => {
        const headers: [string, string][] = [];
        if (r.host !== undefined) headers.push(['Host', r.host]);
        for (const value of [r.authorization].flat()) if (value !== undefined) headers.push(['Authorization', value]);
        if (r.contentType !== undefined) headers.push(['Content-Type', r.contentType]);
        headers.push(...(r.extra as [string, string][]));
        return {
          method,
          target,
          version: r.version,
          headers,
          body: r.body?.bytes,
          chunked: r.chunked && r.version === 'HTTP/1.1',
          oversized: r.body?.oversized ?? false,
        };
      }),
  );
}

// ─────────────────────────── what every answer must be ───────────────────────────

const LEAKS = [/\bat [^\n]*:\d+:\d+/, /\n\s+at /, /node_modules|\/work\/|file:\/\/|\.ts:\d+|\.js:\d+/, /\b(FST_ERR|HPE_|ERR_)[A-Z_]+/, /Error: /];

function check(response: RawResponse, method: string, what: string): void {
  const text = response.body.toString('utf8');
  const context = `${what}\n→ ${response.status} ${response.headers['content-type'] ?? ''} ${text.slice(0, 300)}`;
  if (!(response.status >= 200 && response.status < 500)) throw new Error(`status ${response.status}: ${context}`);
  for (const leak of LEAKS) if (leak.test(text)) throw new Error(`the body leaks internals (${leak}): ${context}`);
  if (response.status < 400) return;
  if (response.headers['content-type'] !== PROBLEM) throw new Error(`a ${response.status} that is not a problem: ${context}`);
  if (method === 'HEAD') return;
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`a problem body that is not JSON: ${context}`);
  }
  const shaped =
    typeof problem.type === 'string' && typeof problem.title === 'string' && problem.title !== '' && typeof problem.detail === 'string' && problem.detail !== '';
  if (!shaped) throw new Error(`a problem without type, title and detail: ${context}`);
  if (problem.status !== response.status) throw new Error(`problem status ${String(problem.status)} ≠ HTTP status: ${context}`);
}

// ─────────────────────────── properties ───────────────────────────

it('builds its route list from the OpenAPI document, with every documented route', () => {
  const routes = operations().map((o) => `${o.method} ${o.path}`);
  expect(routes).toEqual(expect.arrayContaining(['GET /agent/reporting', 'PATCH /agent/update-onboarding', 'GET /agent-payouts/me/statements/{statement_id}']));
  expect(operations().some((o) => o.body !== undefined)).toBe(true);
});

it('answers every hostile request to the gateway without a 5xx or a stack trace, and every 4xx as a problem', async () => {
  const ops = operations();
  const seen = new Map<number, number>();
  await checkProperty(
    [fuzzRequest(ops)],
    async (request) => {
      const response = await exchange(gatewayPort, serialize(request), request.method);
      seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
      check(response, request.method, describeRequest(request));
    },
    { runs: 320, seed: SEED },
  );
  // The fuzzer reached past authentication and validation, not only the front door.
  const statuses = [...seen.keys()];
  expect(statuses).toEqual(expect.arrayContaining([200, 400, 401, 404]));
  expect(statuses.some((s) => s === 403 || s === 422)).toBe(true);
});

it('answers a body over the limit with 413 on every route that takes a body, whatever the credential', async () => {
  const withBody = operations().filter((o) => o.body !== undefined);
  expect(withBody.length).toBeGreaterThan(0);
  await checkProperty(
    [
      fc.constantFrom(...withBody),
      fc.integer({ min: 1, max: 16 * 1024 }),
      fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain'),
      authorization(withBody[0]).filter((a) => !Array.isArray(a)),
      fc.boolean(),
    ],
    async (operation, extra, type, auth, chunked) => {
      const request: FuzzRequest = {
        method: operation.method,
        target: operation.path.replace(/\{[^}]+\}/g, 'x'),
        version: 'HTTP/1.1',
        headers: [['Host', 'localhost'], ['Content-Type', type], ...(auth ? [['Authorization', auth] as [string, string]] : [])],
        body: Buffer.from(JSON.stringify({ query: 'o'.repeat(BODY_LIMIT + extra) })),
        chunked,
        oversized: true,
      };
      const response = await exchange(gatewayPort, serialize(request), request.method);
      check(response, request.method, describeRequest(request));
      if (response.status !== 413) throw new Error(`expected 413, got ${response.status}: ${describeRequest(request)}`);
      expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({ status: 413, type: expect.stringMatching(/payload-too-large$/) });
    },
    { runs: 40, seed: SEED },
  );
});

it("answers hostile requests to the other services' HTTP (health, metrics) the same way", async () => {
  const ports = services.map((s) => (s.app.getHttpServer().address() as { port: number }).port);
  const routes: Operation[] = ['/health/live', '/health/ready', '/metrics'].map((path) => ({ path, method: 'GET', query: [], pathParams: [] }));
  await checkProperty(
    [fc.constantFrom(...ports), fuzzRequest(routes)],
    async (port, request) => {
      const response = await exchange(port, serialize(request), request.method);
      check(response, request.method, describeRequest(request));
    },
    { runs: 80, seed: SEED },
  );
});

describe('hostile requests with a known answer', () => {
  const raw = (text: string | Buffer) => (typeof text === 'string' ? Buffer.from(text, 'latin1') : text);
  const json = (body: Buffer | string, contentType = 'application/json') => {
    const bytes = raw(body);
    return Buffer.concat([
      raw(`PATCH /agent/update-onboarding HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${credentials.ownerToken}\r\nContent-Type: ${contentType}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`),
      bytes,
    ]);
  };
  const cases: [string, number, () => Buffer, RegExp][] = [
    ['two Authorization headers', 400, () => raw(`GET /agent/reporting HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${credentials.liveKey}\r\nAuthorization: Bearer ${credentials.testKey}\r\nConnection: close\r\n\r\n`), /Authorization header appears more than once/],
    ['two Host headers', 400, () => raw('GET /agent/reporting HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n'), /Host header appears more than once/],
    ['HTTP/1.1 without Host', 400, () => raw('GET /agent/reporting HTTP/1.1\r\nConnection: close\r\n\r\n'), /Host header is required/],
    ['CONNECT', 405, () => raw('CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n'), /not a proxy/],
    ['an Expect other than 100-continue', 417, () => raw('GET /agent/reporting HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\nConnection: close\r\n\r\n'), /100-continue/],
    ['a gzip Content-Encoding', 415, () => raw('POST /agent/recommend HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'), /Content-Encoding/],
    ['a JSON body that is not UTF-8', 400, () => json(Buffer.concat([raw('{"reporting_timezone":"Europe/Paris'), Buffer.from([0xff]), raw('"}')])), /not valid UTF-8/],
    ['a JSON body declared in another charset', 415, () => json('{"reporting_timezone":"UTC"}', 'application/json; charset=iso-8859-1'), /must be UTF-8/],
    ['a JSON body with a __proto__ key', 400, () => json('{"__proto__":{"admin":true},"reporting_timezone":"UTC"}'), /JSON/],
    ['a malformed percent-encoding in the path', 400, () => raw('GET /agent-payouts/me/statements/%E0%A4%A HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), /percent-encoding/],
    ['headers over 16 KiB (a very long URL)', 431, () => raw(`GET /agent/reporting?time_range=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`), /too large/],
  ];

  it.each(cases)('%s → %d problem', async (_case, status, request, detail) => {
    const response = await exchange(gatewayPort, request(), 'GET');
    check(response, 'GET', _case);
    expect(response.status).toBe(status);
    expect((JSON.parse(response.body.toString('utf8')) as { detail: string }).detail).toMatch(detail);
  });

  it('answers the same on the other services (createHttpApp)', async () => {
    const port = (services[0].app.getHttpServer().address() as { port: number }).port;
    for (const [name, status, request] of cases.filter(([name]) => !/JSON body/.test(name))) {
      const response = await exchange(port, request(), 'GET');
      check(response, 'GET', name);
      expect([name, response.status]).toEqual([name, status]);
    }
  });
});
