import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PROBLEM_CONTENT_TYPE } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { problemForStatus } from '../http/problem.js';
import { problemExample, problemResponse } from './problem-responses.js';

/** Name of the security scheme of the platform API key (referenced by @ApiBearerAuth). */
export const API_KEY_SECURITY = 'platform_api_key';
/** Name of the security scheme of identity-provider ID tokens (owner routes). */
export const ID_TOKEN_SECURITY = 'id_token';

export const DOCS_PATH = '/docs';
export const OPENAPI_JSON_PATH = '/docs/openapi.json';
const ASSETS_PATH = '/docs/assets';

/** The OpenAPI document of the gateway, built from the controllers' decorators (DESIGN §5). */
export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Weave platform API')
    .setDescription(
      'Public HTTP API of the Weave advertising-recommendation platform. Errors are RFC 9457 problem details ' +
        '(application/problem+json); every response carries an X-Request-Id header to quote to support.',
    )
    .setVersion('1')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'Platform API key (sk_live_… or sk_test_…)',
        description:
          'The platform API key from the dashboard, sent as "Authorization: Bearer <API_KEY>". A production key (sk_live_) reports live traffic, a test key (sk_test_) test traffic. Use it only from a backend.',
      },
      API_KEY_SECURITY,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT (OIDC ID token, RS256 or ES256)',
        description:
          'The ID token of the signed-in platform owner from the identity provider, sent as "Authorization: Bearer <ID_TOKEN>". The token\'s sub must be the owner of the platform. The payout endpoints also need the role agent in the token. API keys are not accepted.',
      },
      ID_TOKEN_SECURITY,
    )
    .addTag('reporting', 'Performance totals of the calling platform.')
    .addTag('onboarding', 'Settings of the platform, changed by its signed-in owner.')
    .addTag(
      'payouts',
      'Read-only payout balances, setup readiness, statements and history of the signed-in platform account (ID token with role agent). ' +
        'Available earnings do not mean a transfer has been sent; reporting earnings are not payout balances.',
    )
    .addTag('recommendations', 'Contextual recommendations for an LLM answer, with signed tracking URLs (what @vendor/weave-node calls).')
    .addTag('tracking', 'The exposure and click URLs of recommendations, opened by end users\' browsers: no API key, signed tokens only.')
    .build();
  // Health and metrics are excluded at their controller (@ApiExcludeController).
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
  documentRateLimits(document);
  return document;
}

/**
 * Every authenticated operation is under the gateway's rate limits (apps/gateway/src/rate-limit):
 * documented once here rather than on each route, so a new route cannot forget it.
 */
function documentRateLimits(document: OpenAPIObject): void {
  const tooMany = problemResponse(
    'Too many requests for this API key or ID token, or too many failed authentications from this address. Wait Retry-After seconds.',
    { rate_limited: { summary: 'Rate limit reached', value: problemExample('rate-limited', 'Rate limit of this API key reached; retry after the Retry-After interval.') } },
    { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  );
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.get, item.put, item.post, item.delete, item.patch]) {
      if (operation?.security?.length && !operation.responses['429']) operation.responses['429'] = tooMany as never;
    }
  }
}

/** The swagger-ui-dist files the page needs, served from the installed package (no CDN). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

function swaggerUiDir(): string {
  // swagger-ui-dist is a dependency of @nestjs/swagger: resolve it from there.
  const fromSwagger = createRequire(createRequire(import.meta.url).resolve('@nestjs/swagger'));
  return dirname(fromSwagger.resolve('swagger-ui-dist/absolute-path.js'));
}

const INIT_JS = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_JSON_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Weave platform API</title>
  <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png">
</head>
<body>
  <noscript>This page needs JavaScript. The OpenAPI document is at <a href="${OPENAPI_JSON_PATH}">${OPENAPI_JSON_PATH}</a>.</noscript>
  <div id="swagger-ui"></div>
  <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${ASSETS_PATH}/swagger-ui-init.js"></script>
</body>
</html>
`;

// Everything the page loads is same-origin; Swagger UI sets inline styles and data: images.
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function send(reply: FastifyReply, contentType: string, body: string | Buffer, cacheControl: string): FastifyReply {
  return reply.header('Content-Type', contentType).header('Cache-Control', cacheControl).header('X-Content-Type-Options', 'nosniff').send(body);
}

/**
 * Serves the document at GET /docs/openapi.json and a Swagger UI page at GET /docs. The UI
 * assets come from the local swagger-ui-dist through fixed routes (only the files listed
 * above; no path from the request reaches the file system). Public: the document holds no
 * secrets and the page only reads it.
 */
export function installApiDocs(app: NestFastifyApplication, document: OpenAPIObject, logger: Logger): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  const json = JSON.stringify(document);
  const dir = swaggerUiDir();
  const cache = new Map<string, Promise<Buffer>>();
  const asset = (name: string): Promise<Buffer> => {
    let file = cache.get(name);
    if (!file) {
      file = readFile(join(dir, name));
      cache.set(name, file);
      file.catch(() => cache.delete(name));
    }
    return file;
  };

  fastify.get(OPENAPI_JSON_PATH, async (_request, reply) => send(reply, 'application/json; charset=utf-8', json, 'no-cache'));
  fastify.get(DOCS_PATH, async (_request, reply) =>
    send(reply.header('Content-Security-Policy', PAGE_CSP), 'text/html; charset=utf-8', PAGE, 'no-cache'),
  );
  fastify.get(`${ASSETS_PATH}/swagger-ui-init.js`, async (_request, reply) =>
    send(reply, 'application/javascript; charset=utf-8', INIT_JS, 'no-cache'),
  );
  for (const [name, contentType] of Object.entries(ASSETS)) {
    fastify.get(`${ASSETS_PATH}/${name}`, async (request, reply) => {
      let body: Buffer;
      try {
        body = await asset(name);
      } catch (error) {
        logger.error({ err: (error as Error).message, asset: name, requestId: request.id }, 'swagger-ui asset unreadable');
        const problem = problemForStatus(500, 'The documentation page is unavailable; the document is at ' + OPENAPI_JSON_PATH + '.');
        return send(reply.code(500), PROBLEM_CONTENT_TYPE, Buffer.from(JSON.stringify(problem)), 'no-store');
      }
      return send(reply, contentType, body, 'public, max-age=3600');
    });
  }
}
