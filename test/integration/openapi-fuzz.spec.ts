import { join } from 'node:path';
import fc from 'fast-check';
import { runAdsCommand, type AdsCommand } from '../../apps/ops/src/ads.js';
import { parseOpsCommand } from '../../apps/ops/src/cli.js';
import { checkProperty, fuzzSeed, seedPlatform, startFuzzedPlatform, startIdentityProvider, useTestStack, type ServiceUnderTest } from '../support/index.js';
import { signIdToken } from '../support/oidc.js';

/**
 * Contract fuzzing: every operation of the gateway's OpenAPI document (GET /docs/openapi.json),
 * owner dashboard, series, CSV, payouts, keys, tracking and recommend routes included, gets
 * requests built from its own declared parameters and body schema, each value valid, at a
 * boundary the schema states (minimum − 1, maximum + 1, maxLength + 1, empty, an enum's near
 * miss), malformed (wrong type, broken encodings, NUL, unicode, prototype keys, repeated) or
 * oversized, with the route's credential mostly valid so the requests get past authentication.
 * Sent eight at a time over keep-alive connections, with every service behind the gateway
 * running. Whatever comes in: no 5xx, and every 4xx an RFC 9457 problem
 * (application/problem+json with type, title, and status equal to the HTTP status). Afterwards
 * every service still answers ready. At least 2,000 requests, every operation many times.
 *
 * The seed changes with every run and is printed at start; FUZZ_SEED=<n> replays a run.
 * (Framing, header and socket-level abuse: http-fuzz.spec.ts.)
 */
const SEED = fuzzSeed('openapi-fuzz');
const BATCH = 8;
const RUNS = 260;
const MIN_REQUESTS = 2_000;
const BODY_LIMIT = 64 * 1024;

const stack = useTestStack();
let gateway: string;
let services: ServiceUnderTest<unknown>[] = [];
let document: OpenApiDocument;
const credentials: Record<string, string> = {};
/** Tracking tokens the gateway signed (the `t` of real exposure and click links), mutated by the fuzzer. */
const trackingTokens: string[] = [];

interface Schema {
  type?: string;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  $ref?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}
interface OpenApiOperation {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Operation {
  key: string;
  path: string;
  method: string;
  parameters: Parameter[];
  body?: Schema;
  security?: string;
}

beforeAll(async () => {
  const { jwks, key: signing } = await startIdentityProvider(stack, ['ES256']);
  ({ gateway, services } = await startFuzzedPlatform(stack, jwks.url));
  const { keys } = await seedPlatform(stack, 'agent_contract', { owner: 'uid_contract', keys: ['live', 'test'] });
  credentials.liveKey = keys.live;
  credentials.testKey = keys.test;
  credentials.agentToken = await signIdToken(signing, { sub: 'uid_contract', role: 'agent' });
  credentials.ownerToken = await signIdToken(signing, { sub: 'uid_contract' });
  credentials.strangerToken = await signIdToken(signing, { sub: 'uid_nobody', role: 'agent' });
  document = (await (await fetch(`${gateway}/docs/openapi.json`)).json()) as OpenApiDocument;
  // Real links, so that the tracking routes get valid, tampered and truncated tokens too.
  await runAdsCommand(parseOpsCommand(['ads', 'import', '--file', join(process.cwd(), 'catalog', 'sample-catalog.json')]) as AdsCommand, stack.db.url);
  for (const query of ['running shoes', 'a laptop for travel']) {
    const response = await fetch(`${gateway}/agent/recommend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${credentials.liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'contract', message_id: query.replace(/\s/g, '-'), query }),
    });
    const body = (await response.json()) as { recommendations?: { click_url: string; exposure_url: string }[] };
    for (const r of body.recommendations ?? []) for (const link of [r.click_url, r.exposure_url]) trackingTokens.push(new URL(link).searchParams.get('t') ?? '');
  }
  // Series are computed on the first request (202 until ready): ask for each valid one once up
  // front, so that the fuzzer's valid series requests reach the JSON and CSV answers.
  const seriesParameters = operations().find((o) => o.key === 'GET /agent/reporting/series')!.parameters;
  const members = (name: string) => (resolve(seriesParameters.find((p) => p.name === name)?.schema)?.enum ?? []).map(String);
  const pending = members('time_range').flatMap((range) => members('granularity').flatMap((granularity) => [credentials.liveKey, credentials.testKey].map((key) => ({ range, granularity, key }))));
  for (let attempt = 0; attempt < 50 && pending.length > 0; attempt += 1) {
    const answers = await Promise.all(
      pending.map(async (p) => (await fetch(`${gateway}/agent/reporting/series?time_range=${p.range}&granularity=${p.granularity}`, { headers: { authorization: `Bearer ${p.key}` } })).status),
    );
    for (let i = answers.length - 1; i >= 0; i -= 1) if (answers[i] !== 202) pending.splice(i, 1);
    if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
});

function resolve(schema: Schema | undefined, depth = 0): Schema | undefined {
  if (!schema || depth > 8) return schema;
  if (schema.$ref) return resolve(document.components?.schemas?.[schema.$ref.split('/').pop() ?? ''], depth + 1);
  if (schema.allOf?.length === 1) return resolve(schema.allOf[0], depth + 1);
  return schema;
}

function operations(): Operation[] {
  const list: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const json = operation.requestBody?.content['application/json']?.schema;
      list.push({
        key: `${method.toUpperCase()} ${path}`,
        path,
        method: method.toUpperCase(),
        parameters: operation.parameters ?? [],
        body: json,
        security: Object.keys(operation.security?.[0] ?? {})[0],
      });
    }
  }
  return list;
}

// ─────────────────────────── values from the schema ───────────────────────────

const MALFORMED = [
  '', ' ', 'null', 'undefined', 'true', '[]', '{}', '-1', '-0', '0', '1.5', '1e309', '0x1f', 'NaN', 'Infinity', '9007199254740993', '-9007199254740993',
  '%00', '\u0000', '%zz', '%E2%82', '../..', '..%2f..', '__proto__', 'constructor', "' OR 1=1 --", '<script>', '😀', 'ﬀ', 'İ', '\u202e', 'a,b', 'a;b',
  '2024-02-30', '2024-13-01', '0000-00-00', '9999-12-31', '2024-01-01T00:00:00Z', 'Europe/Nowhere', 'UTC', 'Etc/GMT+14', '+05:30',
];

/** Values of a declared string or number, at its limits and just past them. */
function boundaries(schema: Schema | undefined): unknown[] {
  const s = resolve(schema) ?? {};
  const values: unknown[] = [];
  if (s.enum?.length) {
    for (const member of s.enum) {
      values.push(member);
      if (typeof member === 'string') values.push(member.toUpperCase(), `${member} `, `${member}x`, member.slice(0, -1));
    }
  }
  for (const limit of [s.minimum, s.maximum]) if (limit !== undefined) values.push(limit, limit - 1, limit + 1, limit + 0.5);
  if (s.minLength !== undefined) values.push('x'.repeat(Math.max(0, s.minLength - 1)), 'x'.repeat(s.minLength));
  if (s.maxLength !== undefined) values.push('x'.repeat(s.maxLength), 'x'.repeat(s.maxLength + 1));
  if (s.type === 'integer' || s.type === 'number') values.push(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 0.1);
  if (s.format === 'date') values.push('2024-01-31', '2024-02-29', '2023-02-29', '1970-01-01', '2100-12-31');
  return values;
}

/** A signed tracking token as issued, or tampered with: one character changed, cut short, extended. */
const trackingToken = (): fc.Arbitrary<string> =>
  fc.constantFrom(...trackingTokens).chain((token) =>
    fc.oneof(
      { arbitrary: fc.constant(token), weight: 3 },
      fc.integer({ min: 0, max: token.length - 1 }).map((i) => `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`),
      fc.integer({ min: 0, max: token.length - 1 }).map((i) => token.slice(0, i)),
      fc.constantFrom(`${token}.`, `${token}=`, `${token}${token}`, token.split('.').reverse().join('.')),
    ),
  );

/** A query, path or header value: valid-looking, at a boundary, malformed or oversized. */
function parameterValue(parameter: Parameter, operation: Operation): fc.Arbitrary<string | string[] | undefined> {
  const stated = boundaries(parameter.schema).map(String);
  const issued = operation.path.startsWith('/track/') && trackingTokens.length > 0 ? [{ arbitrary: trackingToken(), weight: 8 }] : [];
  const one = fc.oneof(
    ...issued,
    { arbitrary: stated.length ? fc.constantFrom(...stated) : fc.integer({ min: 0, max: 100 }).map(String), weight: 5 },
    { arbitrary: fc.constantFrom(...MALFORMED), weight: 3 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 2 },
    { arbitrary: fc.integer({ min: -100_000, max: 100_000 }).map(String), weight: 1 },
    { arbitrary: fc.integer({ min: 600, max: 4_000 }).map((n) => 'v'.repeat(n)), weight: 1 },
  );
  return fc.oneof(
    { arbitrary: one, weight: 12 },
    // absent (a required one then must be refused as a problem), or repeated
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: fc.array(one, { minLength: 2, maxLength: 3 }), weight: 1 },
  );
}

/** `arbitrary` in one case out of six, else undefined. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary, weight: 1 });

/** A value the schema allows (an enum member, an integer in range), so other values' checks are reached. */
function validValue(parameter: Parameter): fc.Arbitrary<string | undefined> {
  const s = resolve(parameter.schema) ?? {};
  if (s.enum?.length) return fc.constantFrom(...s.enum.map(String));
  if (s.type === 'integer' || s.type === 'number') return fc.integer({ min: s.minimum ?? 0, max: s.maximum ?? (s.minimum ?? 0) + 100 }).map(String);
  return parameter.required ? fc.constant('x') : fc.constant(undefined);
}

/**
 * The query values: either every one fuzzed, or (a third of the requests) every one valid and
 * half the time one of them fuzzed, so that a route with several constrained parameters (the series' period,
 * granularity and format: CSV) is reached past its validation too.
 */
function queryValues(query: Parameter[], operation: Operation): fc.Arbitrary<(string | string[] | undefined)[]> {
  const fuzzed = fc.tuple(...query.map((p) => parameterValue(p, operation)));
  if (query.length === 0) return fuzzed;
  const mostlyValid = fc
    .tuple(fc.tuple(...query.map(validValue)), fc.option(fc.nat(query.length - 1), { nil: undefined, freq: 2 }), fuzzed)
    .map(([valid, index, mutations]) => valid.map((value, i) => (i === index ? mutations[i] : value)) as (string | string[] | undefined)[]);
  return fc.oneof({ arbitrary: fuzzed, weight: 2 }, { arbitrary: mostlyValid, weight: 1 });
}

/** A JSON value for a body schema: its fields with valid, boundary or wrong-typed values, or missing. */
function bodyValue(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const wrong = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 20 }), fc.constant([]), fc.constant({}), fc.jsonValue({ maxDepth: 2 }));
  if (!s || depth > 4) return wrong;
  const variant = s.oneOf ?? s.anyOf;
  if (variant?.length) return fc.oneof(...variant.map((v) => bodyValue(v, depth + 1)), wrong);
  if (s.type === 'object' || s.properties) {
    const fields = Object.entries(s.properties ?? {});
    const object = fc
      .tuple(
        ...fields.map(([, property]) => fc.option(bodyValue(property, depth + 1), { nil: undefined, freq: 6 })),
        rarely(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'extra', 'prototype', ''), fc.jsonValue({ maxDepth: 1 }))),
      )
      .map((values) => {
        const out: Record<string, unknown> = {};
        fields.forEach(([name], i) => {
          if (values[i] !== undefined) out[name] = values[i];
        });
        const extra = values[fields.length] as [string, unknown] | undefined;
        if (extra) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true });
        return out;
      });
    return fc.oneof({ arbitrary: object, weight: 8 }, { arbitrary: wrong, weight: 1 });
  }
  if (s.type === 'array') {
    const max = s.maxItems ?? 20;
    return fc.oneof(
      { arbitrary: fc.array(bodyValue(s.items, depth + 1), { maxLength: Math.min(max, 20) }), weight: 6 },
      { arbitrary: fc.array(bodyValue(s.items, depth + 1), { minLength: max + 1, maxLength: max + 3 }), weight: 1 },
      { arbitrary: wrong, weight: 1 },
    );
  }
  const stated = boundaries(s);
  return fc.oneof(
    { arbitrary: stated.length ? fc.constantFrom(...stated) : fc.constantFrom('Europe/Paris', 'running shoes', 'user', 1, 0), weight: 5 },
    { arbitrary: fc.constantFrom(...MALFORMED), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }), weight: 1 },
    { arbitrary: fc.integer({ min: 2_000, max: 20_000 }).map((n) => 'q'.repeat(n)), weight: 1 },
    { arbitrary: wrong, weight: 2 },
  );
}

/** The body bytes: schema-shaped JSON mostly, else truncated, deeply nested, not JSON, or over the limit. */
function bodyBytes(schema: Schema | undefined): fc.Arbitrary<string | undefined> {
  const shaped = bodyValue(schema).map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { arbitrary: shaped, weight: 10 },
    { arbitrary: shaped.chain((text) => fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))), weight: 1 },
    { arbitrary: fc.integer({ min: 100, max: 5_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`), weight: 1 },
    { arbitrary: fc.constantFrom('', 'null', '"text"', '42', '[]', 'a=b', '{"a":1,"a":2}', '{"reporting_timezone":"\\ud800"}', '\u0000'), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: 8 * 1024 }).map((extra) => JSON.stringify({ query: 'o'.repeat(BODY_LIMIT + extra) })), weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
}

/** Mostly the credential the route takes, so the requests reach validation and the services. */
function authorization(operation: Operation): fc.Arbitrary<string | undefined> {
  const matching =
    operation.security === 'platform_api_key'
      ? [credentials.liveKey, credentials.testKey]
      : operation.security === 'id_token'
        ? // The payout routes want role agent (the owner's token without it is refused there).
          operation.path.startsWith('/agent-payouts/')
          ? [credentials.agentToken]
          : [credentials.agentToken, credentials.ownerToken]
        : Object.values(credentials);
  return fc.oneof(
    { arbitrary: fc.constantFrom(...matching).map((c) => `Bearer ${c}`), weight: 16 },
    { arbitrary: fc.constantFrom(...Object.values(credentials)).map((c) => `Bearer ${c}`), weight: 2 },
    { arbitrary: fc.constantFrom(undefined, 'Bearer', 'Bearer sk_live_x', `Bearer ${'k'.repeat(5_000)}`, 'Basic Og=='), weight: 1 },
  );
}

interface ContractRequest {
  operation: Operation;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

function contractRequest(operation: Operation): fc.Arbitrary<ContractRequest> {
  const query = operation.parameters.filter((p) => p.in === 'query');
  const path = operation.parameters.filter((p) => p.in === 'path');
  const headers = operation.parameters.filter((p) => p.in === 'header' && p.name.toLowerCase() !== 'authorization');
  const takesBody = operation.body !== undefined;
  return fc
    .record({
      query: queryValues(query, operation),
      path: fc.tuple(...path.map((p) => parameterValue(p, operation).map((v) => (Array.isArray(v) ? v.join(',') : (v ?? ''))))),
      headers: fc.tuple(...headers.map((p) => parameterValue(p, operation).map((v) => (Array.isArray(v) ? v[0] : v)))),
      // An undeclared parameter now and then: the API must ignore or refuse it, never fail on it.
      stray: rarely(fc.tuple(fc.constantFrom('__proto__', 'format', 'page[size]', 'time_range[]', 'x'), fc.constantFrom(...MALFORMED))),
      authorization: authorization(operation),
      body: takesBody ? bodyBytes(operation.body) : fc.constant(undefined),
      contentType: takesBody
        ? fc.oneof({ arbitrary: fc.constant('application/json'), weight: 12 }, { arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', ''), weight: 1 })
        : fc.constant(undefined),
    })
    .map((r) => {
      let target = operation.path;
      path.forEach((p, i) => (target = target.replace(`{${p.name}}`, encodeURIComponent(r.path[i]) || '%20')));
      const pairs: string[] = [];
      query.forEach((p, i) => {
        for (const value of [r.query[i]].flat()) if (value !== undefined) pairs.push(`${encodeURIComponent(p.name)}=${/^%|%[0-9A-Fa-f]?$/.test(value) ? value : encodeURIComponent(value)}`);
      });
      if (r.stray) pairs.push(`${encodeURIComponent(r.stray[0])}=${encodeURIComponent(r.stray[1])}`);
      const headerValues: Record<string, string> = {};
      headers.forEach((p, i) => {
        const value = r.headers[i];
        if (value !== undefined && /^[\t\x20-\x7e]*$/.test(value)) headerValues[p.name] = value;
      });
      if (r.authorization) headerValues.authorization = r.authorization;
      if (r.body !== undefined && r.contentType) headerValues['content-type'] = r.contentType;
      return { operation, method: operation.method, url: `${gateway}${target}${pairs.length ? `?${pairs.join('&')}` : ''}`, headers: headerValues, body: r.body };
    });
}

// ─────────────────────────── what every answer must be ───────────────────────────

const PROBLEM = 'application/problem+json';

/** Sends the request; throws when the answer breaks the contract. Returns the status and media type. */
async function send(request: ContractRequest): Promise<{ status: number; type: string }> {
  const what = () => `${request.method} ${request.url.slice(0, 300)} ${JSON.stringify(request.headers).slice(0, 200)} ${request.body === undefined ? '' : `body ${request.body.length} B ${JSON.stringify(request.body.slice(0, 160))}`}`;
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual' });
  const text = await response.text();
  const context = () => `${what()}\n→ ${response.status} ${response.headers.get('content-type') ?? ''} ${text.slice(0, 400)}`;
  if (response.status >= 500) throw new Error(`a ${response.status}: ${context()}`);
  if (response.status >= 400) {
    if (response.headers.get('content-type') !== PROBLEM) throw new Error(`a ${response.status} that is not ${PROBLEM}: ${context()}`);
    let problem: { type?: unknown; title?: unknown; status?: unknown };
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch {
      throw new Error(`a problem that is not JSON: ${context()}`);
    }
    if (typeof problem.type !== 'string' || problem.type === '' || typeof problem.title !== 'string' || problem.title === '') throw new Error(`a problem without type or title: ${context()}`);
    if (problem.status !== response.status) throw new Error(`problem status ${String(problem.status)} ≠ HTTP ${response.status}: ${context()}`);
  }
  return { status: response.status, type: (response.headers.get('content-type') ?? '').split(';')[0] };
}

// ─────────────────────────── properties ───────────────────────────

it('reads every operation from the contract: owner dashboard, series, CSV, payouts, keys, tracking and recommend routes', () => {
  const keys = operations().map((o) => o.key);
  expect(keys).toEqual(
    expect.arrayContaining([
      'GET /agent/reporting',
      'GET /agent/reporting/series',
      'GET /agent/dashboard/reporting',
      'GET /agent/dashboard/reporting/series',
      'POST /agent/recommend',
      'GET /track/exposure',
      'GET /track/click',
      'PATCH /agent/update-onboarding',
      'GET /agent-payouts/me/statements/{statement_id}',
    ]),
  );
  // CSV is a format of the series route, chosen by a declared query parameter.
  const series = operations().find((o) => o.key === 'GET /agent/reporting/series')!;
  expect(series.parameters.some((p) => resolve(p.schema)?.enum?.includes('csv'))).toBe(true);
  expect(operations().filter((o) => o.body !== undefined).length).toBeGreaterThan(0);
  // Real tracking links to tamper with.
  expect(trackingTokens.length).toBeGreaterThan(0);
});

it('answers thousands of contract-shaped malformed, boundary and oversized requests without a 5xx, every 4xx a problem, and stays ready', async () => {
  const ops = operations();
  const perOperation = new Map<string, number>(ops.map((o) => [o.key, 0]));
  const statuses = new Map<number, number>();
  const byOperation = new Map<string, Record<number, number>>();
  let sent = 0;
  const types = new Map<string, number>();
  const record = (operation: Operation, { status, type }: { status: number; type: string }) => {
    sent += 1;
    types.set(type, (types.get(type) ?? 0) + 1);
    perOperation.set(operation.key, (perOperation.get(operation.key) ?? 0) + 1);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const tally = byOperation.get(operation.key) ?? {};
    tally[status] = (tally[status] ?? 0) + 1;
    byOperation.set(operation.key, tally);
  };
  // A batch holds one request for each of BATCH operations taken in turn, so every operation is
  // fuzzed about equally; the batch's requests go out together.
  let next = 0;
  const batch = fc.constant(null).chain(() => {
    const chosen = Array.from({ length: BATCH }, () => ops[next++ % ops.length]);
    return fc.tuple(...chosen.map(contractRequest));
  });
  await checkProperty(
    [batch],
    async (requests) => {
      const answers = await Promise.all(requests.map(async (request) => ({ request, answer: await send(request) })));
      for (const { request, answer } of answers) record(request.operation, answer);
    },
    { runs: RUNS, seed: SEED },
  );

  process.stderr.write(
    `[openapi-fuzz] ${sent} requests over ${ops.length} operations; statuses ${JSON.stringify(Object.fromEntries(statuses))}; media types ${JSON.stringify(Object.fromEntries(types))}\n` +
      [...byOperation].map(([key, tally]) => `  ${key}: ${JSON.stringify(tally)}`).join('\n') +
      '\n',
  );
  // PROPERTY_RUNS (a quicker local run) lowers the count; CI runs RUNS batches.
  if (!process.env.PROPERTY_RUNS) expect(sent).toBeGreaterThanOrEqual(MIN_REQUESTS);
  for (const [key, count] of perOperation) expect({ key, fuzzed: count >= Math.floor(sent / ops.length / 2) }).toEqual({ key, fuzzed: true });
  // The requests reached past authentication into validation and the services.
  expect([...statuses.keys()]).toEqual(expect.arrayContaining([200, 400]));
  expect([...statuses.keys()].some((s) => s === 422)).toBe(true);
  // Issued tracking tokens redirected (302) or were answered, tampered ones refused.
  expect(Object.keys(byOperation.get('GET /track/click') ?? {}).some((s) => Number(s) < 400)).toBe(true);
  // Series requests got past validation, to JSON and CSV answers.
  expect(byOperation.get('GET /agent/reporting/series')?.[200] ?? 0).toBeGreaterThan(0);
  expect(types.get('text/csv') ?? 0).toBeGreaterThan(0);

  // Every service is still ready.
  for (const base of [gateway, ...services.map((s) => s.url)]) expect({ base, status: (await fetch(`${base}/health/ready`)).status }).toEqual({ base, status: 200 });
});
