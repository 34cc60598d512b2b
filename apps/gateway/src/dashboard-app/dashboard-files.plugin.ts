import { existsSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE } from '#libs/bootstrap';
import type { Logger } from '#libs/observability';
import type { GatewayEnv } from '../config/gateway.env.js';
import { problemForStatus } from '../http/problem.js';
import { dashboardConfig } from './dashboard-config.js';
import { dashboardHelmetOptions } from './dashboard-security.js';

/** Where the app is served (Vite's `base`; its OAuth redirect URI is `<origin>/dashboard/`). */
export const DASHBOARD_PREFIX = '/dashboard';

/** Hashed build output (`assets/index-<hash>.js`): a new build has new names, so a year and immutable. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** index.html names the current assets: always revalidated (ETag), never served stale. */
export const INDEX_CACHE_CONTROL = 'no-cache';
/** Unhashed files beside it (favicon.svg). */
export const OTHER_CACHE_CONTROL = 'public, max-age=3600';

export type DashboardSettings = Pick<GatewayEnv, 'DASHBOARD_DIR' | 'OIDC_ISSUER' | 'OIDC_CLIENT_ID' | 'OIDC_ROLE_CLAIM' | 'DASHBOARD_CONNECT_SRC'>;

function sendProblem(reply: FastifyReply, status: number, detail: string): void {
  // A Buffer, so that Fastify appends no charset (as the gateway's other problems).
  void reply.code(status).header('cache-control', 'no-store').header('content-type', PROBLEM_CONTENT_TYPE).send(Buffer.from(JSON.stringify(problemForStatus(status, detail))));
}

/**
 * The dashboard at /dashboard/ (DESIGN §7, apps/dashboard/README.md), a Fastify plugin in its
 * own encapsulated context, so that its @fastify/helmet policy and its 404 answer apply to
 * /dashboard… only:
 *
 * - `GET /dashboard` → 308 to `/dashboard/`;
 * - `GET /dashboard/` → index.html, `Cache-Control: no-cache`;
 * - `GET /dashboard/assets/*` (and every other file of the build) by @fastify/static, a route
 *   per file found at start (no path from a request reaches the file system);
 * - `GET /dashboard/config.json` → the sign-in settings, `no-store`;
 * - anything else under /dashboard → a 404 problem.
 *
 * The app keeps its pages in the URL fragment, so it has no routes of its own to fall back to
 * index.html. Without a build (DASHBOARD_DIR/index.html missing) the gateway starts anyway and
 * /dashboard/ answers a 404 problem that says so.
 */
export function dashboardFilesPlugin(settings: DashboardSettings, logger: Logger) {
  const root = resolve(settings.DASHBOARD_DIR);
  const built = existsSync(resolve(root, 'index.html'));
  const config = JSON.stringify(dashboardConfig(settings));
  if (!built) logger.warn({ dir: root }, 'the dashboard is not built (no index.html): /dashboard/ answers 404; npm run build builds it');

  return async function dashboardFiles(scope: FastifyInstance): Promise<void> {
    await scope.register(fastifyHelmet, dashboardHelmetOptions(settings));

    scope.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0];
      sendProblem(reply, 404, `There is no file of the dashboard at ${path}; the dashboard is ${DASHBOARD_PREFIX}/.`);
    });

    scope.get('', (_request, reply) => {
      void reply.redirect(`${DASHBOARD_PREFIX}/`, 308);
    });

    scope.get('/config.json', (_request, reply) => {
      void reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8').send(config);
    });

    if (!built) {
      scope.get('/', { prefixTrailingSlash: 'slash' }, (_request, reply) => {
        sendProblem(reply, 404, `The dashboard is not part of this deployment: ${root}${sep}index.html is missing (npm run build builds it into dist/dashboard).`);
      });
      return;
    }

    await scope.register(fastifyStatic, {
      root,
      prefix: '/',
      // A route per file of the build, found now; index.html is served by the route below.
      wildcard: false,
      index: false,
      serveDotFiles: false,
      cacheControl: false,
      setHeaders: (reply, path) => {
        const file = relative(root, path);
        void reply.header('cache-control', file === 'index.html' ? INDEX_CACHE_CONTROL : file.startsWith(`assets${sep}`) ? ASSET_CACHE_CONTROL : OTHER_CACHE_CONTROL);
      },
    });

    scope.get('/', { prefixTrailingSlash: 'slash' }, (_request, reply) => {
      void reply.sendFile('index.html');
    });
  };
}
