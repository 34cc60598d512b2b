import { connect as connectTcp } from 'node:net';
import { startGateway, useTestStack } from '../support/index.js';

/**
 * The gateway's OpenAPI document and documentation page over real HTTP (DESIGN §5), with this
 * file's private nats-server and database and the machine's Redis. The page must work offline:
 * everything it loads is served by the gateway itself.
 */

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string; scheme?: string }> };
}

const stack = useTestStack();
let base: string;
let port: number;

beforeAll(async () => {
  ({ base } = await startGateway(stack, { oidc: false, extra: { PORT: '0', LOG_LEVEL: 'warn' } }));
  port = Number(new URL(base).port);
});

describe('GET /docs/openapi.json', () => {
  let response: Response;
  let document: OpenApiDocument;

  beforeAll(async () => {
    response = await fetch(`${base}/docs/openapi.json`);
    document = (await response.json()) as OpenApiDocument;
  });

  it('is an OpenAPI 3 document served as JSON without authentication', () => {
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(document.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(document.info.title).toBeTruthy();
    expect(document.info.version).toBeTruthy();
  });

  it('documents GET /agent/reporting with all its statuses', () => {
    const operation = document.paths['/agent/reporting']?.get;
    expect(operation).toBeDefined();
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '202', '401', '403', '422', '429', '503']);
    expect(operation.security).toEqual([{ platform_api_key: [] }]);
    expect(document.components.securitySchemes.platform_api_key).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['Report', 'PreparingReport', 'Problem']));
  });

  it('documents 429 (rate limits) on every authenticated route and on no public one', () => {
    const limited: string[] = [];
    const open: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        (operation.responses['429'] ? limited : open).push(`${method.toUpperCase()} ${path}`);
        expect([path, method, Boolean(operation.responses['429'])]).toEqual([path, method, Boolean(operation.security?.length)]);
      }
    }
    expect(limited).toContain('POST /agent/recommend');
    expect(limited).toContain('GET /agent-payouts/me/statements');
    expect(open.sort()).toEqual(['GET /track/click', 'GET /track/exposure']);
  });

  it.each([
    ['get', '/agent/keys', ['200', '401', '403', '422', '429', '503'], 'id_token'],
    ['post', '/agent/keys', ['201', '400', '401', '403', '409', '413', '415', '422', '429', '503'], 'id_token'],
    ['delete', '/agent/keys/{key_id}', ['204', '401', '403', '404', '422', '429', '503'], 'id_token'],
    ['get', '/agent/reporting/series', ['200', '202', '401', '403', '422', '429', '503'], 'platform_api_key'],
    ['get', '/agent/dashboard/reporting', ['200', '202', '401', '403', '422', '429', '503'], 'id_token'],
    ['get', '/agent/dashboard/reporting/series', ['200', '202', '401', '403', '422', '429', '503'], 'id_token'],
  ])('documents the owner API: %s %s with every status, each error with examples', (method, path, statuses, security) => {
    const operation = document.paths[path]?.[method] as { responses: Record<string, { content?: Record<string, { examples?: object; example?: unknown }> }>; security?: unknown[] };
    expect(Object.keys(operation.responses).sort()).toEqual(statuses);
    expect(operation.security).toEqual([{ [security]: [] }]);
    for (const [status, response] of Object.entries(operation.responses)) {
      const content = response.content ?? {};
      if (Number(status) >= 400) expect({ status, examples: Object.keys(content['application/problem+json']?.examples ?? {}).length > 0 }).toEqual({ status, examples: true });
      else if (status !== '204') expect({ status, example: Object.values(content).every((c) => c.example !== undefined || c.examples !== undefined) }).toEqual({ status, example: true });
    }
    if (path.endsWith('/series') || path.endsWith('/breakdown')) expect(Object.keys(operation.responses['200'].content!).sort()).toEqual(['application/json', 'text/csv']);
  });

  it('leaves out health, metrics and the documentation itself', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/agent-payouts/me/balance',
      '/agent-payouts/me/history',
      '/agent-payouts/me/overview',
      '/agent-payouts/me/readiness',
      '/agent-payouts/me/statements',
      '/agent-payouts/me/statements/{statement_id}',
      '/agent/dashboard/reporting',
      '/agent/dashboard/reporting/breakdown',
      '/agent/dashboard/reporting/series',
      '/agent/keys',
      '/agent/keys/{key_id}',
      '/agent/recommend',
      '/agent/reporting',
      '/agent/reporting/breakdown',
      '/agent/reporting/series',
      '/agent/update-onboarding',
      '/track/click',
      '/track/exposure',
    ]);
  });
});

describe('GET /docs', () => {
  it('is an HTML page that loads Swagger UI and the document from the gateway only', async () => {
    const response = await fetch(`${base}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html\b/);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).toContain('<div id="swagger-ui">');
    // Nothing is fetched from another origin (the machine running it may be offline).
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) expect(url).toMatch(/^\/docs\//);

    for (const url of urls) {
      const asset = await fetch(`${base}${url}`);
      expect([url, asset.status]).toEqual([url, 200]);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it('points Swagger UI at the served document, without the public validator', async () => {
    const init = await (await fetch(`${base}/docs/assets/swagger-ui-init.js`)).text();
    expect(init).toContain('"/docs/openapi.json"');
    expect(init).toContain('validatorUrl: null');
    const bundle = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toMatch(/^application\/javascript\b/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  it('serves no other file of the package', async () => {
    for (const path of ['/docs/assets/index.html', '/docs/assets/../package.json', '/docs/assets/%2e%2e%2fpackage.json']) {
      const response = await fetch(`${base}${path}`);
      expect([path, response.status]).toEqual([path, 404]);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
  });
});

describe('Fastify errors on the gateway', () => {
  it('answers a malformed URL with the gateway 400 problem', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connectTcp(port, '127.0.0.1');
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString('utf8')));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
      socket.write('GET /agent/reporting%zz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { type: string; status: number };
    expect(body).toMatchObject({ type: 'https://docs.weave.example/problems/bad-request', status: 400 });
  });
});
