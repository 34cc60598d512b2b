import { Controller, Get, Inject, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyReply } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import { ProblemException } from '../http/problem.js';
import { OpenApiDocument } from './openapi-document.js';

export const DOCS_PATH = '/docs';
export const OPENAPI_JSON_PATH = '/docs/openapi.json';
const ASSETS_PATH = '/docs/assets';

/** The swagger-ui-dist files the page needs, served from the installed package (no CDN). */
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

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

function send(reply: FastifyReply, contentType: string, body: string | Buffer, cacheControl: string): void {
  void reply.header('Content-Type', contentType).header('Cache-Control', cacheControl).header('X-Content-Type-Options', 'nosniff').send(body);
}

/**
 * Serves the OpenAPI document at GET /docs/openapi.json and a Swagger UI page at GET /docs.
 * The UI assets come from the local swagger-ui-dist through fixed names (only the files listed
 * above; no path from the request reaches the file system). Public: the document holds no
 * secrets and the page only reads it.
 */
@ApiExcludeController()
@Controller('docs')
export class ApiDocsController {
  private readonly dir = swaggerUiDir();
  private readonly files = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly document: OpenApiDocument,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('openapi.json')
  openApi(@Res() reply: FastifyReply): void {
    send(reply, 'application/json; charset=utf-8', this.document.json, 'no-cache');
  }

  @Get()
  page(@Res() reply: FastifyReply): void {
    send(reply.header('Content-Security-Policy', PAGE_CSP), 'text/html; charset=utf-8', PAGE, 'no-cache');
  }

  @Get('assets/swagger-ui-init.js')
  init(@Res() reply: FastifyReply): void {
    send(reply, 'application/javascript; charset=utf-8', INIT_JS, 'no-cache');
  }

  @Get('assets/:name')
  async asset(@Param('name') name: string, @Res() reply: FastifyReply): Promise<void> {
    const contentType = ASSETS.get(name);
    if (!contentType) throw new NotFoundException();
    let body: Buffer;
    try {
      body = await this.read(name);
    } catch (error) {
      this.logger.error({ err: (error as Error).message, asset: name, requestId: reply.request.id }, 'swagger-ui asset unreadable');
      throw new ProblemException('internal-error', `The documentation page is unavailable; the document is at ${OPENAPI_JSON_PATH}.`);
    }
    send(reply, contentType, body, 'public, max-age=3600');
  }

  private read(name: string): Promise<Buffer> {
    let file = this.files.get(name);
    if (!file) {
      file = readFile(join(this.dir, name));
      this.files.set(name, file);
      file.catch(() => this.files.delete(name));
    }
    return file;
  }
}
